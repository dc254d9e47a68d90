package informer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
)

// typedView mirrors what a handler has been told, checking each call
// against it: adds only for keys it lacks, updates carrying the object it
// has, deletes only for keys it has.
type typedView struct {
	mu   sync.Mutex
	view map[string]*corev1.ConfigMap
	errs []string
}

func key(c *corev1.ConfigMap) string { return c.Namespace + "/" + c.Name }

func (v *typedView) bad(format string, args ...any) {
	if len(v.errs) < 5 {
		v.errs = append(v.errs, fmt.Sprintf(format, args...))
	}
}

func (v *typedView) OnAdd(c *corev1.ConfigMap, _ bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if old, ok := v.view[key(c)]; ok {
		v.bad("add %s@%s while the handler has @%s", key(c), c.ResourceVersion, old.ResourceVersion)
	}
	v.view[key(c)] = c
}

func (v *typedView) OnUpdate(old, new *corev1.ConfigMap) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.view[key(new)] != old {
		v.bad("update %s from @%s, but the handler has %v", key(new), old.ResourceVersion, v.view[key(new)] != nil)
	}
	v.view[key(new)] = new
}

func (v *typedView) OnDelete(c *corev1.ConfigMap, _ bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.view[key(c)]; !ok {
		v.bad("delete %s the handler does not have", key(c))
	}
	delete(v.view, key(c))
}

func (v *typedView) list() []*corev1.ConfigMap {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]*corev1.ConfigMap, 0, len(v.view))
	for _, c := range v.view {
		out = append(out, c)
	}
	return out
}

// injectFault applies one random fault to srv.
func injectFault(t *testing.T, rnd *rand.Rand, srv *fake.Server) string {
	switch rnd.IntN(7) {
	case 0:
		srv.Down()
		time.Sleep(time.Duration(rnd.IntN(5000)) * time.Millisecond)
		srv.Up()
		return "down"
	case 1:
		kinds := []fake.FailureKind{fake.Expired, fake.TooManyRequests, fake.InternalError, fake.ConnectionRefused}
		k := kinds[rnd.IntN(len(kinds))]
		f := fake.Failure{Kind: k, Times: 1 + rnd.IntN(3), InStream: k != fake.ConnectionRefused && rnd.IntN(2) == 0}
		if err := srv.FailNext(f); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("fail %d x%d", k, f.Times)
	case 2:
		if err := srv.Compact(srv.ResourceVersion()); err != nil {
			t.Fatal(err)
		}
		return "compact"
	case 3:
		srv.CloseWatches(cmGVR)
		return "close"
	case 4:
		if err := srv.InjectWatchFault(fake.WatchFault{Times: 1, CloseAfterEvents: 1 + rnd.IntN(5)}); err != nil {
			t.Fatal(err)
		}
		return "cut"
	default:
		time.Sleep(time.Duration(rnd.IntN(3000)) * time.Millisecond)
		return "pause"
	}
}

// churnRun is one schedule of churnUntilConverged.
type churnRun struct {
	seed           uint64
	rnd            *rand.Rand
	srv            *fake.Server
	lw             fake.LWOptions
	inf            *Informer[*corev1.ConfigMap]
	view           *typedView
	warmup, rounds int // churn steps before the first fault; rounds of churn + one fault
}

// churnUntilConverged churns the server (warmup steps, then rounds of 1–15
// steps each followed by a random fault), clears the faults, waits until
// the informer has caught up with the server's resource version, and
// checks that its cache and the handler's view equal the server's with no
// contradictory handler call. It returns the injected faults and the
// context that bounded the wait (5 minutes of virtual time), for further
// checks on the same schedule.
func churnUntilConverged(t *testing.T, ctx context.Context, r churnRun) (context.Context, []string) {
	t.Helper()
	churn, err := fake.NewChurn(r.srv, fake.ChurnOptions{Resource: cmGVR, Seed: r.seed, Namespaces: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.warmup > 0 {
		if err := churn.Steps(ctx, r.warmup); err != nil {
			t.Fatal(err)
		}
	}
	var faults []string
	for range r.rounds {
		if err := churn.Steps(ctx, 1+r.rnd.IntN(15)); err != nil {
			t.Fatal(err)
		}
		faults = append(faults, injectFault(t, r.rnd, r.srv))
	}
	r.srv.ClearFaults()
	r.srv.Up()
	waitCtx, stop := context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(stop)
	if err := r.inf.WaitForResourceVersion(waitCtx, r.srv.ResourceVersion()); err != nil {
		t.Fatalf("seed %d (faults %v): %v", r.seed, faults, err)
	}
	synctest.Wait()
	if err := fake.Converged(r.srv, r.lw, r.inf.Reader().List()); err != nil {
		t.Fatalf("seed %d: listwatch cache (faults %v): %v", r.seed, faults, err)
	}
	if err := fake.Converged(r.srv, r.lw, r.view.list()); err != nil {
		t.Fatalf("seed %d: handler view (faults %v): %v", r.seed, faults, err)
	}
	if len(r.view.errs) > 0 {
		t.Fatalf("seed %d: inconsistent handler calls: %v", r.seed, r.view.errs)
	}
	return waitCtx, faults
}

// Under seeded random churn and faults (server down, 410/429/500/refused,
// in-stream errors, compaction, cut watches), the cache and every handler's
// view end equal to the server's objects, and no handler call contradicts
// what the handler saw. client-go's informer runs in the same schedule for
// comparison.
func TestConvergesUnderRandomFaults(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 10
	}
	// client-go's HandleError rate-limits with a global clock reading that
	// outlives synctest bubbles and then sleeps for years of virtual time;
	// replace it for the duration of the test.
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(context.Context, error, string, ...any) {}}
	t.Cleanup(func() { utilruntime.ErrorHandlers = saved })
	for seed := range uint64(seeds) {
		synctest.Test(t, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 42))
			srv := fake.NewTestServer(t, fake.Options{HistorySize: 20 + rnd.IntN(200)})
			lw := fake.LWOptions{Resource: cmGVR}
			inf, err := New(Options[*corev1.ConfigMap]{Source: srv.ListerWatcher(lw), OrderedQueue: seed%2 == 1})
			if err != nil {
				t.Fatal(err)
			}
			view := &typedView{view: map[string]*corev1.ConfigMap{}}
			if _, err := inf.AddHandler(view, HandlerOptions{}); err != nil {
				t.Fatal(err)
			}
			cg := cache.NewSharedIndexInformer(srv.ListerWatcher(lw), &corev1.ConfigMap{}, 0, cache.Indexers{})
			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			wg.Go(func() { _ = inf.Run(ctx) })
			wg.Go(func() { cg.RunWithContext(ctx) })
			defer func() { cancel(); wg.Wait() }()

			waitCtx, faults := churnUntilConverged(t, ctx, churnRun{seed: seed, rnd: rnd, srv: srv, lw: lw,
				inf: inf, view: view, rounds: 30})
			// client-go, same schedule: give it the same five minutes.
			for fake.Converged(srv, lw, cg.GetStore().List()) != nil && waitCtx.Err() == nil {
				time.Sleep(100 * time.Millisecond)
			}
			if err := fake.Converged(srv, lw, cg.GetStore().List()); err != nil {
				t.Fatalf("seed %d: client-go's informer did not converge within 5 minutes (faults %v): %.300v", seed, faults, err)
			}
		})
	}
}
