package informer

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/reflector"
)

// With AtomicRelists, a reader never sees a list half applied: the first
// list appears whole, and a relist that swaps every object (a0..aN for
// b0..bN, in pages and over several batches) shows the old set or the new
// one, never a mix. The reader here is a handler that reads the cache on
// every notification, concurrently with the pop loop. Without the option
// the same run may show a mix (and, on this machine, usually does); the
// test asserts only the guarantee.
func TestAtomicRelistsReadersNeverSeeAMix(t *testing.T) {
	for _, mode := range []struct {
		name    string
		inOrder bool
		list    reflector.WatchListMode
	}{{"coalescing, paged", false, reflector.WatchListOff}, {"in order, streaming", true, reflector.WatchListForce}} {
		t.Run(mode.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n = 300
				srv := fake.NewTestServer(t, fake.Options{})
				for i := range n {
					for _, p := range []string{"a", "b"} {
						if _, err := srv.Create(t.Context(), objects.ConfigMap("ns", fmt.Sprintf("%s%d", p, i), objects.Data("v", "0"))); err != nil {
							t.Fatal(err)
						}
					}
				}
				src := &choosySource{ListerWatcherWithContext: srv.ListerWatcher(fake.LWOptions{Resource: cmGVR})}
				var as, bs []string
				for i := range n {
					as, bs = append(as, fmt.Sprintf("a%d", i)), append(bs, fmt.Sprintf("b%d", i))
				}
				src.set(as...)
				inf, err := New(Options[*corev1.ConfigMap]{Source: src, AtomicRelists: true, OrderedQueue: mode.inOrder,
					Reflector: reflector.Config[*corev1.ConfigMap]{PageSize: 50, WatchList: mode.list}})
				if err != nil {
					t.Fatal(err)
				}
				var mu sync.Mutex
				var seen []string // the mixes seen, and the first reads
				reads := 0
				read := func(*corev1.ConfigMap) {
					var a, b int
					for _, o := range inf.Reader().List() {
						if strings.HasPrefix(o.Name, "a") {
							a++
						} else {
							b++
						}
					}
					mu.Lock()
					defer mu.Unlock()
					reads++
					if (a != 0 && a != n) || (b != 0 && b != n) || (a != 0 && b != 0) {
						seen = append(seen, fmt.Sprintf("a=%d b=%d", a, b))
					}
				}
				runSynced(t, inf, HandlerFuncs[*corev1.ConfigMap]{
					AddFunc:    func(o *corev1.ConfigMap, _ bool) { read(o) },
					UpdateFunc: func(_, o *corev1.ConfigMap) { read(o) },
					DeleteFunc: func(o *corev1.ConfigMap, _ bool) { read(o) },
				})
				src.set(bs...)
				inf.Relist()
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				if len(seen) > 0 {
					t.Fatalf("readers saw a list half applied %d times, e.g. %v", len(seen), seen[:min(3, len(seen))])
				}
				if reads != 3*n {
					t.Fatalf("%d notifications, want %d (adds, then adds and deletions)", reads, 3*n)
				}
				if got := len(inf.Reader().List()); got != n {
					t.Fatalf("cache holds %d objects, want %d", got, n)
				}
			})
		})
	}
}
