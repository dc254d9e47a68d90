package factory

import (
	"slices"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/informertest"
	"github.com/listwatch/listwatch/internal/testing/objects"
)

// A factory's WrapSource wraps every informer's source, and a wrapped
// source with RelistWith gets the informer's Relist: a sharded factory is
// the plain one plus a wrapper.
func TestFactoryWrapSourceShardsEveryInformer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		for _, n := range []string{"a", "b", "c"} {
			if _, err := srv.Create(t.Context(), objects.ConfigMap("ns", n, objects.Data("v", "0"))); err != nil {
				t.Fatal(err)
			}
		}
		var wrapped []*informertest.PartSource
		f := New(Options{WrapSource: func(resource string, src cache.ListerWatcherWithContext) cache.ListerWatcherWithContext {
			if resource != "configmaps" {
				t.Errorf("resource %q", resource)
			}
			r := informertest.NewPartSource(src, "a", "b")
			wrapped = append(wrapped, r)
			return r
		}})
		defer f.Shutdown()
		inf, err := For(f, "configmaps", Selection{}, fakeSource(srv), informer.Options[*corev1.ConfigMap]{})
		if err != nil {
			t.Fatal(err)
		}
		if len(wrapped) != 1 || !wrapped[0].Relisting() {
			t.Fatalf("wrapped %d sources; relist hook set: %v", len(wrapped), len(wrapped) == 1 && wrapped[0].Relisting())
		}
		h := &cmEvents{}
		if _, err := inf.AddHandler(h, informer.HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
		f.Start(t.Context())
		if err := f.WaitForCacheSync(t.Context()); err != nil {
			t.Fatal(err)
		}
		if keys := slices.Sorted(slices.Values(inf.Reader().ListKeys())); !slices.Equal(keys, []string{"ns/a", "ns/b"}) {
			t.Fatalf("cache %v, want the wrapped source's part", keys)
		}
		synctest.Wait()
		h.Take()
		wrapped[0].Serve("b", "c")
		synctest.Wait()
		if keys := slices.Sorted(slices.Values(inf.Reader().ListKeys())); !slices.Equal(keys, []string{"ns/b", "ns/c"}) {
			t.Fatalf("cache %v after the part changed, want ns/b and ns/c", keys)
		}
		h.ExpectExactly(t, "add c@3 initial=false", "moved a@1")
	})
}
