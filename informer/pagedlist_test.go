package informer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/store"
)

// With lists of many small pages, the informer takes each list a page at
// a time (the sink is a reflector.PagedStore): under the same churn and
// faults as TestConvergesUnderRandomFaults, the cache and the handler's
// view still end equal to the server's, with no contradictory call.
func TestConvergesWithPagedLists(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 4
	}
	var pages atomic.Int64
	convergeInPages(t, seeds, 7, reflector.WatchListOff, func(lw cache.ListerWatcherWithContext) cache.ListerWatcherWithContext {
		return noWatchCache{lw, &pages}
	})
	if pages.Load() < int64(seeds)*10 {
		t.Fatalf("only %d list pages over %d seeds: lists were not paged", pages.Load(), seeds)
	}
}

// convergeInPages runs churnUntilConverged for seeds seeds on an informer
// whose lists come in pages of 1 to 3 objects, with the given streaming
// mode, over the fake server's ListerWatcher as wrap returns it.
func convergeInPages(t *testing.T, seeds int, stream uint64, mode reflector.WatchListMode, wrap func(cache.ListerWatcherWithContext) cache.ListerWatcherWithContext) {
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(context.Context, error, string, ...any) {}}
	t.Cleanup(func() { utilruntime.ErrorHandlers = saved })
	for seed := range uint64(seeds) {
		synctest.Test(t, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, stream))
			srv := fake.NewTestServer(t, fake.Options{HistorySize: 20 + rnd.IntN(200)})
			lw := fake.LWOptions{Resource: cmGVR}
			inf, err := New(Options[*corev1.ConfigMap]{Source: wrap(srv.ListerWatcher(lw)), OrderedQueue: seed%2 == 1,
				Reflector: reflector.Config[*corev1.ConfigMap]{PageSize: 1 + int64(rnd.IntN(3)), WatchList: mode}})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := any(inf.sink).(reflector.PagedStore[*corev1.ConfigMap]); !ok {
				t.Fatal("the informer's sink is not a reflector.PagedStore")
			}
			view := &typedView{view: map[string]*corev1.ConfigMap{}}
			if _, err := inf.AddHandler(view, HandlerOptions{}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			wg.Go(func() { _ = inf.Run(ctx) })
			defer func() { cancel(); wg.Wait() }()

			churnUntilConverged(t, ctx, churnRun{seed: seed, rnd: rnd, srv: srv, lw: lw,
				inf: inf, view: view, warmup: 30, rounds: 20})
		})
	}
}

// noWatchCache serves RV="0" lists as quorum reads, which the fake server
// pages (a real server without a watch cache does the same): the first
// list is then paged, and so is every relist. It counts list pages.
type noWatchCache struct {
	cache.ListerWatcherWithContext
	pages *atomic.Int64
}

func (n noWatchCache) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	if opts.ResourceVersion == "0" {
		opts.ResourceVersion = ""
	}
	if opts.Limit > 0 {
		n.pages.Add(1)
	}
	return n.ListerWatcherWithContext.ListWithContext(ctx, opts)
}

// Streaming lists go to the store a page at a time too: with small pages
// and streaming forced, under the same churn and faults, the cache and the
// handler's view end equal to the server's.
func TestConvergesWithPagedStreams(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	var streams atomic.Int64
	convergeInPages(t, seeds, 11, reflector.WatchListForce, func(lw cache.ListerWatcherWithContext) cache.ListerWatcherWithContext {
		return countStreams{lw, &streams}
	})
	if streams.Load() < int64(seeds) {
		t.Fatalf("only %d streaming lists over %d seeds", streams.Load(), seeds)
	}
}

// countStreams counts the streaming lists (watches with sendInitialEvents).
type countStreams struct {
	cache.ListerWatcherWithContext
	streams *atomic.Int64
}

func (c countStreams) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		c.streams.Add(1)
	}
	return c.ListerWatcherWithContext.WatchWithContext(ctx, opts)
}

// A paged list waits for the pop loop to apply each page before the next
// is fetched. When the informer's context ends while the pop loop is held
// (here by an index function that blocks), the reflector stops at once
// instead of waiting for a drain that will not come; Run then returns as
// soon as the pop loop is released.
func TestStopDuringPagedListWithStalledApply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		for i := range 200 {
			if _, err := srv.Create(t.Context(), objects.ConfigMap("ns", fmt.Sprintf("cm-%03d", i), objects.Data("v", "0"))); err != nil {
				t.Fatal(err)
			}
		}
		var pages atomic.Int64
		release := make(chan struct{})
		var once sync.Once
		held := make(chan struct{})
		inf, err := New(Options[*corev1.ConfigMap]{
			Source: noWatchCache{srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &pages},
			Indexers: store.Indexers[*corev1.ConfigMap]{"hold": func(*corev1.ConfigMap) ([]string, error) {
				once.Do(func() { close(held); <-release })
				return nil, nil
			}},
			Reflector: reflector.Config[*corev1.ConfigMap]{PageSize: 10, WatchList: reflector.WatchListOff},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = inf.Run(ctx) }()
		<-held
		synctest.Wait() // the reflector waits for the held pop loop to drain
		if n := pages.Load(); n >= 20 {
			t.Fatalf("%d pages fetched with the pop loop held: the reflector did not wait", n)
		}
		cancel()
		synctest.Wait()
		if got := inf.Status().Phase; got != reflector.PhaseStopped {
			t.Errorf("reflector phase %v after the context ended, with the pop loop held: want stopped", got)
		}
		close(release)
		<-done
	})
}
