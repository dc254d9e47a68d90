package informer

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/reflector"
)

// A Transform that returns nil (no error) for an object, or fails, drops
// that object: the rest of the list is applied, the informer syncs, a
// relist does not crash (it did: a nil stored by the first list was
// dereferenced), the drop is counted and reported in Status, and a list
// that drops nothing clears the report. An object whose new version the
// Transform drops is removed by the next relist. Streaming and paginated
// lists alike.
func TestTransformDropsBadObjects(t *testing.T) {
	for _, paged := range []bool{false, true} {
		t.Run(fmt.Sprintf("paged=%v", paged), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				transform := func(c *corev1.ConfigMap) (*corev1.ConfigMap, error) {
					switch {
					case c.Name == "nil" || c.Data["v"] == "nil":
						return nil, nil
					case c.Name == "err":
						return nil, errors.New("no")
					}
					return c, nil
				}
				e := newEnv(t, Options[*corev1.ConfigMap]{Transform: transform})
				if paged {
					var pages atomic.Int64
					src := noWatchCache{e.srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &pages}
					inf, err := New(Options[*corev1.ConfigMap]{Transform: transform, Source: src,
						Reflector: reflector.Config[*corev1.ConfigMap]{PageSize: 1, WatchList: reflector.WatchListOff}})
					if err != nil {
						t.Fatal(err)
					}
					e.inf = inf
					defer func() {
						if pages.Load() < 4 {
							t.Errorf("%d list pages: the lists were not paged", pages.Load())
						}
					}()
				}
				a := e.create(t, "a")
				e.create(t, "nil")
				e.create(t, "err")
				e.create(t, "b")
				h := &cmEvents{}
				if _, err := e.inf.AddHandler(h, HandlerOptions{}); err != nil {
					t.Fatal(err)
				}
				e.run(t)
				e.waitRV(t)
				got := h.Take()
				slices.Sort(got)
				if want := []string{"add a@1 initial=true", "add b@4 initial=true"}; !slices.Equal(got, want) {
					t.Fatalf("after the first list: got %q, want %q", got, want)
				}
				var de *DropError
				if st := e.inf.Status(); !errors.As(st.LastError, &de) || de.Reason != reflector.ReasonStore || e.inf.Dropped() != 2 {
					t.Fatalf("Status %+v, Dropped %d: want the last drop reported, 2 dropped", st, e.inf.Dropped())
				}

				// a's new version is dropped on the watch: the cache keeps
				// the old one, until a relist (which drops it again).
				a2 := a.DeepCopy()
				a2.Data["v"] = "nil"
				if _, err := e.srv.Update(t.Context(), a2); err != nil {
					t.Fatal(err)
				}
				e.waitRV(t)
				if got := h.Take(); len(got) != 0 || e.inf.Dropped() != 3 {
					t.Fatalf("dropped watch event: handler got %q, %d dropped", got, e.inf.Dropped())
				}
				e.srv.Down()
				e.create(t, "c")
				if err := e.srv.Compact(e.srv.ResourceVersion()); err != nil {
					t.Fatal(err)
				}
				e.srv.Up()
				e.waitRV(t)
				got = h.Take()
				slices.Sort(got)
				if want := []string{"add c@6 initial=false", "delete a@1 unknown=true"}; !slices.Equal(got, want) {
					t.Fatalf("after the relist: got %q, want %q", got, want)
				}
				if names := cachedNames(e.inf); !slices.Equal(names, []string{"b", "c"}) {
					t.Fatalf("cached %q, want b and c", names)
				}
				if e.inf.Dropped() != 6 || e.inf.Status().LastError == nil {
					t.Fatalf("after the relist: %d dropped, Status %+v", e.inf.Dropped(), e.inf.Status())
				}

				// Once the bad objects are gone, a clean relist clears Status.
				for _, name := range []string{"a", "nil", "err"} {
					obj, err := e.srv.Get(t.Context(), cmGVR, "ns", name)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := e.srv.Delete(t.Context(), obj); err != nil {
						t.Fatal(err)
					}
				}
				e.waitRV(t)
				e.srv.Down()
				if err := e.srv.Compact(e.srv.ResourceVersion()); err != nil {
					t.Fatal(err)
				}
				e.srv.Up()
				e.waitRV(t)
				if st := e.inf.Status(); errors.As(st.LastError, &de) {
					t.Fatalf("after a clean relist Status still reports %v", st.LastError)
				}
				e.converged(t)
			})
		})
	}
}

func cachedNames(inf *Informer[*corev1.ConfigMap]) []string {
	var names []string
	for _, c := range inf.Reader().List() {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	return names
}
