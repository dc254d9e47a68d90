package cache

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/store"
)

func nsIndexers() cache.Indexers {
	return cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
}

// TestPodListerOnDropIn runs client-go's generated lister on the drop-in.
func TestPodListerOnDropIn(t *testing.T) {
	idx := NewIndexer(cache.MetaNamespaceKeyFunc, nsIndexers())
	for _, p := range []*corev1.Pod{
		objects.Pod("a", "web", objects.Labels(map[string]string{"app": "web"})),
		objects.Pod("a", "db", objects.Labels(map[string]string{"app": "db"})),
		objects.Pod("b", "web", objects.Labels(map[string]string{"app": "web"})),
	} {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	lister := corev1listers.NewPodLister(idx)
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	all, err := lister.List(web)
	if err != nil || !slices.Equal(names(all), []string{"a/web", "b/web"}) {
		t.Fatalf("List(app=web) = %v, %v", names(all), err)
	}
	inA, err := lister.Pods("a").List(labels.Everything())
	if err != nil || !slices.Equal(names(inA), []string{"a/db", "a/web"}) {
		t.Fatalf("Pods(a).List = %v, %v", names(inA), err)
	}
	got, err := lister.Pods("b").Get("web")
	if err != nil || got.Namespace != "b" {
		t.Fatalf("Pods(b).Get(web) = %v, %v", got, err)
	}
	if _, err := lister.Pods("b").Get("db"); !apierrors.IsNotFound(err) {
		t.Fatalf("Pods(b).Get(db): %v, want NotFound", err)
	}
}

func TestDropInErrors(t *testing.T) {
	boomKey := func(any) (string, error) { return "", errBoom }
	failing := cache.Indexers{"failing": func(obj any) ([]string, error) {
		if obj.(*corev1.Pod).Name == "bad" {
			return nil, errBoom
		}
		return []string{"ok"}, nil
	}}
	for _, tc := range []struct {
		name string
		idx  cache.Indexer
		run  func(cache.Indexer) error
		want error
	}{
		{"key error is a KeyError", NewIndexer(boomKey, nil), func(i cache.Indexer) error { return i.Add(objects.Pod("a", "x")) }, errBoom},
		{"Get key error", NewIndexer(boomKey, nil), func(i cache.Indexer) error { _, _, err := i.Get(objects.Pod("a", "x")); return err }, errBoom},
		{"nil key func", NewIndexer(nil, nil), func(i cache.Indexer) error { return i.Update(objects.Pod("a", "x")) }, store.ErrNoKeyFunc},
		{"Replace key error", NewIndexer(cache.MetaNamespaceKeyFunc, nil), func(i cache.Indexer) error { return i.Replace([]any{"not an object"}, "1") }, nil},
		{"index error is returned, not a panic", NewIndexer(cache.MetaNamespaceKeyFunc, failing), func(i cache.Indexer) error { return i.Add(objects.Pod("a", "bad")) }, store.ErrIndexFunc},
		{"ByIndex unknown index", NewIndexer(cache.MetaNamespaceKeyFunc, nil), func(i cache.Indexer) error { _, err := i.ByIndex("nope", "x"); return err }, store.ErrUnknownIndex},
		{"AddIndexers conflict", NewIndexer(cache.MetaNamespaceKeyFunc, nsIndexers()), func(i cache.Indexer) error { return i.AddIndexers(nsIndexers()) }, store.ErrIndexConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run(tc.idx)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if errors.Is(tc.want, errBoom) || errors.Is(tc.want, store.ErrNoKeyFunc) {
				var ke cache.KeyError
				if !errors.As(err, &ke) {
					t.Fatalf("%v is not a cache.KeyError", err)
				}
			}
			if len(tc.idx.ListKeys()) != 0 {
				t.Fatalf("a failed call stored %v", tc.idx.ListKeys())
			}
		})
	}
}

func TestDropInIndexersAndResync(t *testing.T) {
	idx := NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"nil": nil})
	_ = idx.Add(objects.Pod("a", "x", objects.Node("n1")))
	if vals := idx.ListIndexFuncValues("nil"); len(vals) != 0 {
		t.Fatalf("nil index function yielded %v", vals)
	}
	if err := idx.AddIndexers(nsIndexers()); err != nil {
		t.Fatal(err)
	}
	got := idx.GetIndexers()
	if len(got) != 2 || got[cache.NamespaceIndex] == nil {
		t.Fatalf("GetIndexers = %v", got)
	}
	delete(got, cache.NamespaceIndex) // a copy: the store keeps its index
	if keys, err := idx.IndexKeys(cache.NamespaceIndex, "a"); err != nil || !slices.Equal(keys, []string{"a/x"}) {
		t.Fatalf("IndexKeys after AddIndexers = %v, %v", keys, err)
	}
	if err := idx.Resync(); err != nil {
		t.Fatal(err)
	}
}

func TestDropInTransaction(t *testing.T) {
	idx := NewIndexer(cache.MetaNamespaceKeyFunc, nsIndexers())
	_ = idx.Add(objects.Pod("a", "gone"))
	txns := []cache.Transaction{
		{Type: cache.TransactionTypeAdd, Object: objects.Pod("a", "x")},
		{Type: cache.TransactionTypeUpdate, Object: "no metadata"},
		{Type: cache.TransactionTypeDelete, Object: objects.Pod("a", "gone")},
		{Type: "Frobnicate", Object: objects.Pod("a", "y")},
		{Type: cache.TransactionTypeUpdate, Object: objects.Pod("a", "z", objects.RV("9"))},
	}
	terr := idx.(cache.TransactionStore).Transaction(txns...)
	if terr == nil || !slices.Equal(terr.SuccessfulIndices, []int{0, 2, 4}) || terr.TotalTransactions != 5 || len(terr.Errors) != 2 {
		t.Fatalf("TransactionError = %+v", terr)
	}
	keys := idx.ListKeys()
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"a/x", "a/z"}) || idx.LastStoreSyncResourceVersion() != "9" {
		t.Fatalf("after transaction: %v rv %q", keys, idx.LastStoreSyncResourceVersion())
	}
	if terr := idx.(cache.TransactionStore).Transaction(); terr != nil {
		t.Fatalf("empty transaction: %v", terr)
	}
}

// With client-go's StoreOptions (here a transformer), NewStore is
// client-go's own store, so that they apply.
func TestStoreOptionsApply(t *testing.T) {
	s := NewStore(cache.MetaNamespaceKeyFunc, cache.WithTransformer(func(obj any) (any, error) {
		p := obj.(*corev1.Pod).DeepCopy()
		p.Labels = map[string]string{"transformed": "yes"}
		return p, nil
	}))
	if err := s.Add(objects.Pod("a", "x")); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.GetByKey("a/x")
	if err != nil || !ok || got.(*corev1.Pod).Labels["transformed"] != "yes" {
		t.Fatalf("GetByKey = %v, %v, %v; want the transformed pod", got, ok, err)
	}
}
