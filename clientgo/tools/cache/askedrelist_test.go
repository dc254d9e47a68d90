package cache

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/store"
)

// TestAskedRelistTellsNoUnchangedObject: a relist asked for with
// informer.Relist on the drop-in's informer (how a scope change starts,
// clientgo/informers.SetScope) lists again but tells client-go handlers
// nothing for the objects it finds unchanged, where the drop-in's own
// relists hand each to them as an update, as client-go's do.
func TestAskedRelistTellsNoUnchangedObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		srv := fake.NewTestServer(t, fake.Options{})
		srv.Create(ctx, objects.ConfigMap("ns", "a"))
		srv.Create(ctx, objects.ConfigMap("ns", "b"))
		inf := NewSharedIndexInformer(srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &corev1.ConfigMap{}, 0, nil)
		var mu sync.Mutex
		var calls []string
		note := func(verb string, obj any) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, verb+" "+obj.(*corev1.ConfigMap).Name)
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { note("add", obj) },
			UpdateFunc: func(_, obj any) { note("update", obj) },
			DeleteFunc: func(obj any) { note("delete", obj) },
		}); err != nil {
			t.Fatal(err)
		}
		runSII(t, inf)
		srv.ResetCalls()
		inf.(interface {
			Informer() *informer.Informer[store.Object]
		}).Informer().Relist()
		synctest.Wait()
		lists := 0
		for _, c := range srv.Calls() {
			if c.Verb == fake.VerbList || c.Options.SendInitialEvents != nil && *c.Options.SendInitialEvents {
				lists++
			}
		}
		if lists != 1 {
			t.Fatalf("the asked relist made %d lists (or watch-lists), want 1: %+v", lists, srv.Calls())
		}
		srv.Create(ctx, objects.ConfigMap("ns", "c"))
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if want := []string{"add a", "add b", "add c"}; !slices.Equal(slices.Sorted(slices.Values(calls)), want) {
			t.Fatalf("calls %v, want %v: no update for the relist's unchanged objects", calls, want)
		}
	})
}
