package informer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/reflector"
)

// pageGate holds back the second page of the first list until release is
// closed, so that a test can act while the informer has applied only the
// first page.
type pageGate struct {
	cache.ListerWatcherWithContext
	release chan struct{}
	held    atomic.Bool
}

func (g *pageGate) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	if opts.Continue != "" && g.held.CompareAndSwap(false, true) {
		<-g.release
	}
	return g.ListerWatcherWithContext.ListWithContext(ctx, opts)
}

// A handler added while the first list is being applied (60 of 100
// objects cached) is handed the 60 as a replay and the other 40 as they
// arrive: all 100 exactly once, as initial adds, and its HasSynced turns
// true only once it has had them all.
func TestLateHandlerDuringInitialList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		for i := range 100 {
			if _, err := srv.Create(t.Context(), objects.ConfigMap("ns", fmt.Sprintf("o%03d", i), objects.Data("v", "0"))); err != nil {
				t.Fatal(err)
			}
		}
		var pages atomic.Int64
		gate := &pageGate{ListerWatcherWithContext: noWatchCache{srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &pages},
			release: make(chan struct{})}
		inf, err := New(Options[*corev1.ConfigMap]{Source: gate,
			Reflector: reflector.Config[*corev1.ConfigMap]{PageSize: 60, WatchList: reflector.WatchListOff}})
		if err != nil {
			t.Fatal(err)
		}
		early := &cmEvents{}
		if _, err := inf.AddHandler(early, HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = inf.Run(ctx) }()
		defer func() { cancel(); <-done }()
		synctest.Wait()
		if n := inf.Reader().Len(); n != 60 || inf.HasSynced() || !gate.held.Load() {
			t.Fatalf("cached %d, synced %v, second page held %v: want 60 cached mid-list", n, inf.HasSynced(), gate.held.Load())
		}

		late := &cmEvents{}
		lateReg, err := inf.AddHandler(late, HandlerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// A second one that cannot take its notifications yet: it must not
		// report synced before it has had them.
		hold := make(chan struct{})
		slow := &cmEvents{}
		slowReg, err := inf.AddHandler(HandlerFuncs[*corev1.ConfigMap]{
			AddFunc: func(c *corev1.ConfigMap, initial bool) { <-hold; slow.OnAdd(c, initial) },
		}, HandlerOptions{Delivery: new(InOrder)})
		if err != nil {
			t.Fatal(err)
		}
		close(gate.release)
		if err := inf.WaitForSync(t.Context()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if slowReg.HasSynced() {
			t.Fatal("a handler that has not taken its replay reports HasSynced")
		}
		close(hold)
		synctest.Wait()

		want := make([]string, 0, 100)
		for i := range 100 {
			want = append(want, fmt.Sprintf("add o%03d@%d initial=true", i, i+1))
		}
		for name, h := range map[string]*cmEvents{"early": early, "late": late, "slow": slow} {
			got := h.Take()
			sort.Strings(got)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s handler got %d calls, want the 100 initial adds once each; got %q", name, len(got), got)
			}
		}
		if !lateReg.HasSynced() || !slowReg.HasSynced() {
			t.Fatalf("HasSynced late=%v slow=%v after the replay was delivered", lateReg.HasSynced(), slowReg.HasSynced())
		}
	})
}

// lateView is a typedView (which records contradictory calls) that also
// records an initial add arriving after its registration reported
// HasSynced: the replay must be complete by then.
type lateView struct {
	typedView
	name string
	reg  atomic.Pointer[Registration[*corev1.ConfigMap]]
}

func (v *lateView) OnAdd(c *corev1.ConfigMap, initial bool) {
	if r := v.reg.Load(); initial && r != nil && r.HasSynced() {
		v.mu.Lock()
		v.bad("initial add %s after HasSynced", key(c))
		v.mu.Unlock()
	}
	v.typedView.OnAdd(c, initial)
}

// lateHandlers adds handlers at random moments, from any goroutine.
type lateHandlers struct {
	t   *testing.T
	inf *Informer[*corev1.ConfigMap]
	// max is the most handlers added from one place (where) before the
	// informer synced, and after.
	max   int
	mu    sync.Mutex
	rnd   *rand.Rand
	count map[string]int
	all   []*lateView
	when  []string
}

// maybe adds a handler with probability p, noting where from.
func (l *lateHandlers) maybe(p float64, where string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	synced := l.inf.HasSynced()
	where = fmt.Sprintf("%s synced=%v", where, synced)
	if l.count[where] >= l.max || l.rnd.Float64() >= p {
		return
	}
	l.count[where]++
	mode := DeliveryMode(l.rnd.IntN(2))
	v := &lateView{typedView: typedView{view: map[string]*corev1.ConfigMap{}}, name: fmt.Sprintf("h%d(mode %d)", len(l.all), mode)}
	reg, err := l.inf.AddHandler(v, HandlerOptions{Delivery: &mode})
	if err != nil {
		l.t.Errorf("AddHandler from %s: %v", where, err)
		return
	}
	v.reg.Store(reg)
	l.all = append(l.all, v)
	l.when = append(l.when, fmt.Sprintf("from %s with %d cached", where, l.inf.Reader().Len()))
}

// hookedList adds a late handler, sometimes, whenever the reflector asks
// for a list page: while the previous page is being applied.
type hookedList struct {
	noWatchCache
	late *lateHandlers
}

func (h hookedList) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	h.late.maybe(0.3, "list page")
	return h.noWatchCache.ListWithContext(ctx, opts)
}

// Property: handlers added at random moments — while a big first list is
// applied page by page, from the reflector's goroutine and from another
// handler's, during churn, during relists after faults — each end with a
// view equal to the cache and the server, built from calls that never
// contradict it (no add of a key it has, no update or delete of one it
// lacks, hence no duplicate add), each registration synced, with no initial
// add after it reported synced.
func TestLateHandlersGetEverythingOnce(t *testing.T) {
	seeds := 30
	if testing.Short() {
		seeds = 6
	}
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(context.Context, error, string, ...any) {}}
	t.Cleanup(func() { utilruntime.ErrorHandlers = saved })
	var pages atomic.Int64
	midList, after := 0, 0
	for seed := range uint64(seeds) {
		synctest.Test(t, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 14))
			srv := fake.NewTestServer(t, fake.Options{HistorySize: 20 + rnd.IntN(200)})
			lw := fake.LWOptions{Resource: cmGVR}
			for i := range 200 + rnd.IntN(200) {
				c := objects.ConfigMap("ns", fmt.Sprint("seed-", i), objects.Data("v", "0"))
				c.Namespace = []string{"a", "b"}[i%2]
				if _, err := srv.Create(t.Context(), c); err != nil {
					t.Fatal(err)
				}
			}
			late := &lateHandlers{t: t, max: 3, count: map[string]int{}, rnd: rand.New(rand.NewPCG(seed, 15))}
			src := hookedList{noWatchCache{srv.ListerWatcher(lw), &pages}, late}
			inf, err := New(Options[*corev1.ConfigMap]{Source: src, OrderedQueue: seed%2 == 1,
				Reflector: reflector.Config[*corev1.ConfigMap]{PageSize: 1 + int64(rnd.IntN(40)), WatchList: reflector.WatchListOff}})
			if err != nil {
				t.Fatal(err)
			}
			late.inf = inf
			// The first handler spawns others from its own goroutine.
			first := &lateView{typedView: typedView{view: map[string]*corev1.ConfigMap{}}, name: "first"}
			spawner := HandlerFuncs[*corev1.ConfigMap]{
				AddFunc:    func(c *corev1.ConfigMap, initial bool) { first.OnAdd(c, initial); late.maybe(0.02, "handler add") },
				UpdateFunc: func(old, new *corev1.ConfigMap) { first.OnUpdate(old, new); late.maybe(0.02, "handler update") },
				DeleteFunc: func(c *corev1.ConfigMap, unknown bool) {
					first.OnDelete(c, unknown)
					late.maybe(0.02, "handler delete")
				},
			}
			reg, err := inf.AddHandler(spawner, HandlerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			first.reg.Store(reg)
			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			wg.Go(func() { _ = inf.Run(ctx) })
			defer func() { cancel(); wg.Wait() }()

			churn, err := fake.NewChurn(srv, fake.ChurnOptions{Resource: cmGVR, Seed: seed, Namespaces: []string{"a", "b"}, MaxObjects: 500})
			if err != nil {
				t.Fatal(err)
			}
			var faults []string
			for range 15 {
				if err := churn.Steps(ctx, 1+rnd.IntN(15)); err != nil {
					t.Fatal(err)
				}
				late.maybe(0.3, "test")
				faults = append(faults, injectFault(t, rnd, srv))
			}
			srv.ClearFaults()
			srv.Up()
			waitCtx, stop := context.WithTimeout(ctx, 5*time.Minute)
			defer stop()
			if err := inf.WaitForResourceVersion(waitCtx, srv.ResourceVersion()); err != nil {
				t.Fatalf("seed %d (faults %v): %v", seed, faults, err)
			}
			synctest.Wait()
			if err := fake.Converged(srv, lw, inf.Reader().List()); err != nil {
				t.Fatalf("seed %d: cache (faults %v): %v", seed, faults, err)
			}
			late.mu.Lock()
			defer late.mu.Unlock()
			for i, v := range append([]*lateView{first}, late.all...) {
				when := "before Run"
				if i > 0 {
					when = late.when[i-1]
					if strings.Contains(when, "synced=false") {
						midList++
					} else {
						after++
					}
				}
				if err := fake.Converged(srv, lw, v.list()); err != nil {
					t.Errorf("seed %d: handler %s added %s: view: %v", seed, v.name, when, err)
				}
				if len(v.errs) > 0 {
					t.Errorf("seed %d: handler %s added %s: contradictory calls: %v", seed, v.name, when, v.errs)
				}
				if !v.reg.Load().HasSynced() {
					t.Errorf("seed %d: handler %s added %s: not synced", seed, v.name, when)
				}
			}
		})
	}
	if midList < seeds || after < seeds {
		t.Fatalf("over %d seeds, only %d handlers were added before the informer synced and %d after", seeds, midList, after)
	}
	t.Logf("%d handlers added after Run before the first sync completed, %d after; %d list pages", midList, after, pages.Load())
}
