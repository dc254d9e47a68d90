package cache

import (
	"slices"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/internal/testing/objects"
)

// Index runs the index function on whatever it is given, as client-go's
// indexer does: client-go's generated listers ask the namespace index with
// a bare *metav1.ObjectMeta (cache.ListAllByNamespace), and a custom index
// may be asked with any value its function reads. The drop-in informer's
// indexer answers as client-go's informer's, on the same server.
func TestIndexWithAnyObjectAsClientGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		for _, c := range []struct{ ns, name, tier string }{{"a", "x", "web"}, {"a", "y", "db"}, {"b", "z", "web"}, {"b", "w", ""}} {
			var lbls map[string]string
			if c.tier != "" {
				lbls = map[string]string{"tier": c.tier}
			}
			srv.Create(t.Context(), objects.ConfigMap(c.ns, c.name, objects.Data("v", "0"), objects.Labels(lbls)))
		}
		// A multi-valued index read from any metav1.Object: the tier and
		// "all".
		byTier := func(obj any) ([]string, error) {
			o, err := meta.Accessor(obj)
			if err != nil {
				return nil, err
			}
			return []string{"all", o.GetLabels()["tier"]}, nil
		}
		indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, "tier": byTier}
		lw := NewSharedIndexInformer(srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &corev1.ConfigMap{}, 0, indexers)
		cg := cache.NewSharedIndexInformer(srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &corev1.ConfigMap{}, 0, indexers)
		runSII(t, lw)
		runSII(t, cg)

		ask := func(idx cache.Indexer) []string {
			var out []string
			for _, q := range []struct {
				index string
				obj   any
			}{
				{cache.NamespaceIndex, &metav1.ObjectMeta{Namespace: "a"}},
				{cache.NamespaceIndex, &metav1.ObjectMeta{Namespace: "nowhere"}},
				{"tier", &metav1.ObjectMeta{Labels: map[string]string{"tier": "web"}}},
				{"missing", &metav1.ObjectMeta{}},
			} {
				items, err := idx.Index(q.index, q.obj)
				var names []string
				for _, it := range items {
					names = append(names, it.(*corev1.ConfigMap).Namespace+"/"+it.(*corev1.ConfigMap).Name)
				}
				slices.Sort(names)
				out = append(out, q.index+": "+joinNames(names)+errText(err))
			}
			ns, err := corev1listers.NewConfigMapLister(idx).ConfigMaps("b").List(labels.Everything())
			var names []string
			for _, c := range ns {
				names = append(names, c.Name)
			}
			slices.Sort(names)
			return append(out, "lister b: "+joinNames(names)+errText(err))
		}
		if got, want := ask(lw.GetIndexer()), ask(cg.GetIndexer()); !slices.Equal(got, want) {
			t.Errorf("drop-in:\n%q\nclient-go:\n%q", got, want)
		}
	})
}

func joinNames(names []string) string {
	s := "["
	for i, n := range names {
		if i > 0 {
			s += " "
		}
		s += n
	}
	return s + "]"
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return " error: " + err.Error()
}
