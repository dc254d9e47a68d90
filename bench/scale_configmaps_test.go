package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/reflector"
)

// makeConfigMap is a small ConfigMap as a Helm release leaves it: three
// labels, three short data keys and one managedFields entry (about 0.6 KB
// as JSON).
func makeConfigMap(i int) corev1.ConfigMap {
	app := "app-" + strconv.Itoa(i%200)
	return corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns-" + strconv.Itoa(i%corpusNamespace), Name: app + "-config-" + strconv.Itoa(i),
			UID: types.UID(fmt.Sprintf("5c1d2e3f-0000-4000-8000-%012d", i)), ResourceVersion: strconv.Itoa(1000 + i), CreationTimestamp: objects.Created,
			Labels: map[string]string{"app": app, "app.kubernetes.io/managed-by": "Helm", "release": app + "-prod"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "v1", Time: &objects.Created, FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:data":{".":{},"f:LOG_LEVEL":{},"f:PORT":{},"f:config.yaml":{}},"f:metadata":{"f:labels":{".":{},"f:app":{},"f:app.kubernetes.io/managed-by":{},"f:release":{}}}}`)}},
		},
		Data: map[string]string{"LOG_LEVEL": "info", "PORT": strconv.Itoa(8000 + i%1000),
			"config.yaml": "server:\n  name: " + app + "\n  replicas: 3\n"},
	}
}

// configMapSource serves n ConfigMaps from a pre-decoded, paged-only source
// that deep-copies every page it serves: each informer owns its objects,
// as if it had decoded them, and neither library decodes anything.
func configMapSource(_ *testing.B, n int) *scaleSource {
	return cachedSource("configmaps/"+strconv.Itoa(n), func() *scaleSource {
		items, next := make([]corev1.ConfigMap, n), make([]corev1.ConfigMap, n)
		for i := range items {
			items[i] = makeConfigMap(i)
			next[i] = items[i]
			next[i].ResourceVersion = strconv.Itoa(1_000_000 + 1000 + i)
			next[i].Labels = map[string]string{"gen": "1"}
			for k, v := range items[i].Labels {
				next[i].Labels[k] = v
			}
		}
		return &scaleSource{start: func(b *testing.B, st scaleStart) (*running, func() func() time.Time) {
			ch := make(chan watch.Event, 1)
			lw := newScaleLW(objects.NoWatchList(&configMapLW{items: items, rv: "1", ch: ch}))
			run := startConfigMaps(b, st.lib, st.source(lw), st.hit)
			return run, func() func() time.Time {
				started := lw.relist(objects.NoWatchList(&configMapLW{items: next, rv: "2", ch: ch}))
				ch <- expired
				return started
			}
		}}
	})
}

// configMapLW lists items in pages of opts.Limit (continue = offset), each
// item deep-copied, and forwards ch to its watch. It cannot serve
// streaming lists: it is used through objects.NoWatchList, so that both
// libraries list in pages.
type configMapLW struct {
	ch    chan watch.Event
	items []corev1.ConfigMap
	rv    string
}

func (s *configMapLW) List(opts metav1.ListOptions) (kruntime.Object, error) {
	items, rv := s.items, s.rv
	from, _ := strconv.Atoi(opts.Continue)
	to := len(items)
	l := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	if opts.Limit > 0 && from+int(opts.Limit) < to {
		to = from + int(opts.Limit)
		l.Continue = strconv.Itoa(to)
	}
	l.Items = make([]corev1.ConfigMap, to-from)
	for i := range l.Items {
		items[from+i].DeepCopyInto(&l.Items[i])
	}
	return l, nil
}

func (s *configMapLW) Watch(metav1.ListOptions) (watch.Interface, error) {
	return watch.NewProxyWatcher(s.ch), nil
}

func (s *configMapLW) ListWithContext(_ context.Context, opts metav1.ListOptions) (kruntime.Object, error) {
	return s.List(opts)
}

func (s *configMapLW) WatchWithContext(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return s.Watch(opts)
}

// startConfigMaps starts lib's informer of ConfigMaps with a namespace
// index, one in-order handler fn and each library's recommended way of
// dropping managedFields: start (subject_test.go) for ConfigMaps, which
// start cannot serve (it is typed for pods and indexes them by node).
func startConfigMaps(b *testing.B, lib string, lw cache.ListerWatcher, fn func()) *running {
	ctx, cancel := context.WithCancel(b.Context())
	var wg sync.WaitGroup
	r := &running{stop: func() { cancel(); wg.Wait() }}
	switch lib {
	case "listwatch":
		inf, err := informer.New(informer.Options[*corev1.ConfigMap]{Source: reflector.FromListerWatcher(lw), OrderedQueue: true,
			Transform: informer.StripManagedFields[*corev1.ConfigMap]})
		if err != nil {
			b.Fatal(err)
		}
		mode := informer.InOrder
		if _, err := inf.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
			AddFunc:    func(*corev1.ConfigMap, bool) { fn() },
			UpdateFunc: func(_, _ *corev1.ConfigMap) { fn() },
			DeleteFunc: func(*corev1.ConfigMap, bool) { fn() },
		}, informer.HandlerOptions{Delivery: &mode}); err != nil {
			b.Fatal(err)
		}
		wg.Go(func() { _ = inf.Run(ctx) })
		r.hasSynced = inf.HasSynced
	case "client-go":
		inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		if err := inf.SetTransform(crcache.TransformStripManagedFields()); err != nil {
			b.Fatal(err)
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { fn() }, UpdateFunc: func(_, _ any) { fn() }, DeleteFunc: func(any) { fn() },
		}); err != nil {
			b.Fatal(err)
		}
		wg.Go(func() { inf.RunWithContext(ctx) })
		r.hasSynced = inf.HasSynced
	default:
		b.Fatalf("unknown library %q", lib)
	}
	return r
}
