package informer

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/internal/testing/objects"
)

// choosySource serves only the objects whose names it currently wants, as
// a sharded source serves its member's part.
type choosySource struct {
	cache.ListerWatcherWithContext
	mu   sync.Mutex
	want map[string]bool
}

func (c *choosySource) wants(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.want[name]
}

func (c *choosySource) set(names ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.want = map[string]bool{}
	for _, n := range names {
		c.want[n] = true
	}
}

func (c *choosySource) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	list, err := c.ListerWatcherWithContext.ListWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	kept := items[:0]
	for _, o := range items {
		if m, err := meta.Accessor(o); err == nil && c.wants(m.GetName()) {
			kept = append(kept, o)
		}
	}
	return list, meta.SetList(list, kept)
}

func (c *choosySource) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := c.ListerWatcherWithContext.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		m, err := meta.Accessor(ev.Object)
		return ev, err != nil || ev.Type == watch.Bookmark || c.wants(m.GetName())
	}), nil
}

// Relist takes in a change of what the source serves at once: the handler
// hears the objects gained as adds and the ones lost as deletions with
// FinalStateUnknown, the cache ends equal to what the source now serves,
// and no backoff or error is involved.
func TestRelistOnRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		for _, n := range []string{"a", "b", "c"} {
			if _, err := srv.Create(t.Context(), objects.ConfigMap("ns", n, objects.Data("v", "0"))); err != nil {
				t.Fatal(err)
			}
		}
		src := &choosySource{ListerWatcherWithContext: srv.ListerWatcher(fake.LWOptions{Resource: cmGVR})}
		src.set("a", "b")
		inf, err := New(Options[*corev1.ConfigMap]{Source: src})
		if err != nil {
			t.Fatal(err)
		}
		h := &cmEvents{}
		runSynced(t, inf, h)
		h.ExpectExactly(t, "add a@1 initial=true", "add b@2 initial=true")

		src.set("b", "c")
		inf.Relist()
		synctest.Wait()
		h.ExpectExactly(t, "add c@3 initial=false", "delete a@1 unknown=true")
		if keys := inf.Reader().ListKeys(); !slices.Equal(sorted(keys), []string{"ns/b", "ns/c"}) {
			t.Fatalf("cache holds %v, want ns/b and ns/c", keys)
		}
		if st := inf.Status(); st.Failures != 0 || st.LastError != nil {
			t.Fatalf("a requested relist counted as a failure: %+v", st)
		}
		// The watch after the relist serves the new part.
		time.Sleep(time.Second)
		if _, err := srv.Create(t.Context(), objects.ConfigMap("ns", "a2", objects.Data("v", "0"))); err != nil {
			t.Fatal(err)
		}
		c, _ := srv.Get(t.Context(), cmGVR, "ns", "c")
		cc := c.(*corev1.ConfigMap).DeepCopy()
		cc.Data["v"] = "1"
		if _, err := srv.Update(t.Context(), cc); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		h.ExpectExactly(t, "update c@3->5")
	})
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
