package store_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/store"
)

// The drop-in indexer runs client-go's MetaNamespaceIndexFunc without its
// slice per call; what it indexes, and what it refuses, stay client-go's:
// namespaced and cluster-scoped objects under their namespace (""). An
// ExplicitKey, which the key function takes and the index function does
// not, is refused with client-go's words (client-go's indexer panics
// there: the drop-in's one documented difference, an error instead).
func TestDropInNamespaceIndexAsClientGo(t *testing.T) {
	idx := map[string]cache.Indexer{
		"client-go": cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}),
		"listwatch": store.NewDropInIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}),
	}
	type answer struct {
		errs       []string
		a, cluster []string
	}
	got := map[string]answer{}
	for name, ix := range idx {
		var ans answer
		for _, obj := range []any{
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p"}},
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "q"}},
			&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}},
		} {
			errText := ""
			if err := ix.Add(obj); err != nil {
				errText = err.Error()
			}
			ans.errs = append(ans.errs, errText)
		}
		// Moving a pod to another namespace is a new key; updating in
		// place keeps its index value.
		if err := ix.Update(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "q", Labels: map[string]string{"v": "2"}}}); err != nil {
			t.Fatal(err)
		}
		for ns, dst := range map[string]*[]string{"a": &ans.a, "": &ans.cluster} {
			keys, err := ix.IndexKeys(cache.NamespaceIndex, ns)
			if err != nil {
				t.Fatal(err)
			}
			*dst = slices.Sorted(slices.Values(keys))
		}
		got[name] = ans
	}
	want, lw := got["client-go"], got["listwatch"]
	if !slices.Equal(lw.errs, want.errs) || !slices.Equal(lw.a, want.a) || !slices.Equal(lw.cluster, want.cluster) {
		t.Fatalf("listwatch %+v\nclient-go %+v", lw, want)
	}
	if !slices.Equal(want.a, []string{"a/p", "a/q"}) || !slices.Equal(want.cluster, []string{"n"}) {
		t.Fatalf("client-go answered %+v: the test's premise changed", want)
	}
	err := idx["listwatch"].Add(cache.ExplicitKey("a/x"))
	if err == nil || !strings.Contains(err.Error(), "object has no meta: ") {
		t.Fatalf("an ExplicitKey: %v, want client-go's \"object has no meta\"", err)
	}
	if _, ok, _ := idx["listwatch"].GetByKey("a/x"); ok {
		t.Fatal("the refused ExplicitKey was stored")
	}

	// An update in place allocates nothing for the namespace index (the
	// key function's string is the one allocation left).
	ix := idx["listwatch"]
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p"}}
	if n := testing.AllocsPerRun(100, func() { _ = ix.Update(p) }); n > 1 {
		t.Errorf("Update allocates %.0f times; want at most 1 (the key)", n)
	}
}
