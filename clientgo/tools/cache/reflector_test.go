package cache

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/internal/testing/objects"
)

// callStore is a client-go store (client-go's own, inside) that records
// the calls a reflector makes on it, as kube-state-metrics' stores see
// them: "replace [a@5 b@6] rv=6", "add c@7", "resync", ...
type callStore struct {
	cache.Store
	mu    sync.Mutex
	calls []string
	rv    string // the last UpdateResourceVersion
}

func newCallStore() *callStore {
	return &callStore{Store: cache.NewStore(cache.MetaNamespaceKeyFunc)}
}

func (s *callStore) log(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, fmt.Sprintf(format, args...))
}

func (s *callStore) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.calls
	s.calls = nil
	return out
}

func nameRV(obj any) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return m.GetName() + "@" + m.GetResourceVersion()
}

func (s *callStore) Add(obj any) error { s.log("add %s", nameRV(obj)); return s.Store.Add(obj) }
func (s *callStore) Update(obj any) error {
	s.log("update %s", nameRV(obj))
	return s.Store.Update(obj)
}
func (s *callStore) Delete(obj any) error {
	s.log("delete %s", nameRV(obj))
	return s.Store.Delete(obj)
}
func (s *callStore) Resync() error { s.log("resync"); return s.Store.Resync() }

// Replace records the list sorted: client-go's streaming list collects
// it in a map.
func (s *callStore) Replace(list []any, rv string) error {
	items := make([]string, 0, len(list))
	for _, o := range list {
		items = append(items, nameRV(o))
	}
	slices.Sort(items)
	s.log("replace %v rv=%s", items, rv)
	return s.Store.Replace(list, rv)
}

func (s *callStore) UpdateResourceVersion(rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv = rv
}

func (s *callStore) lastRV() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rv
}

// runner is what both reflectors offer the tests.
type runner interface {
	RunWithContext(ctx context.Context)
	LastSyncResourceVersion() string
}

type newReflector func(lw cache.ListerWatcher, example any, s cache.ReflectorStore, o cache.ReflectorOptions) runner

var reflectorImpls = []struct {
	name string
	new  newReflector
}{
	{"listwatch", func(lw cache.ListerWatcher, example any, s cache.ReflectorStore, o cache.ReflectorOptions) runner {
		r := NewReflectorWithOptions(lw, example, s, o)
		r.ShouldResync = everyOther()
		return r
	}},
	{"client-go", func(lw cache.ListerWatcher, example any, s cache.ReflectorStore, o cache.ReflectorOptions) runner {
		r := cache.NewReflectorWithOptions(lw, example, s, o)
		r.ShouldResync = everyOther()
		return r
	}},
}

// everyOther allows every other resync, starting with the first.
func everyOther() func() bool {
	var n int
	return func() bool { n++; return n%2 == 1 }
}

// run runs r until the test ends and waits until the bubble is idle.
func run(t *testing.T, r runner) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); r.RunWithContext(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	synctest.Wait()
}

// The kube-state-metrics pattern: a reflector writing into a store of the
// caller's. listwatch's and client-go's make the same calls on the same
// script (list, events, resync with ShouldResync, a missed deletion
// healed by a relist after compaction), and both end equal to the server.
func TestReflectorSameCallsAsClientGo(t *testing.T) {
	transcripts := map[string][]string{}
	for _, im := range reflectorImpls {
		t.Run(im.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := t.Context()
				var out []string
				log := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
				srv := fake.NewTestServer(t, fake.Options{})
				a, _ := srv.Create(ctx, objects.ConfigMap("ns", "a", objects.Data("v", "0")))
				srv.Create(ctx, objects.ConfigMap("ns", "b", objects.Data("v", "0")))
				st := newCallStore()
				r := im.new(srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &corev1.ConfigMap{}, st,
					cache.ReflectorOptions{Name: "cms", ResyncPeriod: 30 * time.Second})
				run(t, r)
				log("list %q", st.take())

				a2 := a.DeepCopyObject().(*corev1.ConfigMap)
				a2.Data["v"] = "1"
				a3, _ := srv.Update(ctx, a2)
				srv.Delete(ctx, a3)
				srv.Create(ctx, objects.ConfigMap("ns", "c", objects.Data("v", "0")))
				synctest.Wait()
				log("events %q rv=server's: %v store rv=server's: %v", st.take(),
					r.LastSyncResourceVersion() == srv.ResourceVersion(), st.lastRV() == srv.ResourceVersion())

				time.Sleep(61 * time.Second)
				synctest.Wait()
				log("resyncs %q", st.take())

				// A deletion missed while the server was down, and compacted
				// away: only a relist brings it.
				missDeletion(t, srv, "b")
				// Before the next resync (90s): client-go's restarts its
				// resync period on a relist, listwatch's keeps it.
				time.Sleep(28 * time.Second)
				synctest.Wait()
				log("relist %q rv=server's: %v", st.take(), r.LastSyncResourceVersion() == srv.ResourceVersion())
				if err := fake.Converged(srv, fake.LWOptions{Resource: cmGVR}, st.List()); err != nil {
					t.Fatal(err)
				}
				transcripts[im.name] = out
			})
		})
	}
	sameTranscripts(t, transcripts)
}

// Through client-go's own indexer, as NewNamespaceKeyedIndexerAndReflector
// builds it, and with the exported fields set as callers set them.
func TestReflectorIntoIndexer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		srv := fake.NewTestServer(t, fake.Options{})
		for i := range 5 {
			srv.Create(ctx, objects.ConfigMap("ns", fmt.Sprint("cm", i), objects.Data("v", "0")))
		}
		idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		// Paginated lists: a source without streaming lists.
		lw := objects.NoWatchList(srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}))
		r := NewReflector(lw, &corev1.ConfigMap{}, idx, 0)
		r.WatchListPageSize = 2
		r.MaxInternalErrorRetryDuration = time.Minute
		if r.Name() == "" || r.TypeDescription() != "*v1.ConfigMap" {
			t.Fatalf("name %q, type %q", r.Name(), r.TypeDescription())
		}
		srv.ResetCalls()
		run(t, r)
		var limits []int64
		for _, c := range srv.Calls() {
			if c.Verb == fake.VerbList {
				limits = append(limits, c.Options.Limit)
			}
		}
		if len(limits) == 0 || slices.ContainsFunc(limits, func(l int64) bool { return l != 2 }) {
			t.Fatalf("list limits %v, want pages of 2", limits)
		}
		got, err := idx.ByIndex(cache.NamespaceIndex, "ns")
		if err != nil || len(got) != 5 {
			t.Fatalf("ByIndex: %d objects, %v", len(got), err)
		}
		if err := fake.Converged(srv, fake.LWOptions{Resource: cmGVR}, idx.List()); err != nil {
			t.Fatal(err)
		}
		if idx.LastStoreSyncResourceVersion() != srv.ResourceVersion() {
			t.Fatalf("indexer rv %q, server's %q", idx.LastStoreSyncResourceVersion(), srv.ResourceVersion())
		}
	})
}

// Objects of another type than expectedType reach neither the store from
// a list (client-go's would store them) nor from a watch (as client-go's).
func TestReflectorDropsUnexpectedTypes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		srv := fake.NewTestServer(t, fake.Options{})
		srv.Create(ctx, objects.ConfigMap("ns", "a", objects.Data("v", "0")))
		st := newCallStore()
		r := NewNamedReflector("pods", srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &corev1.Pod{}, st, 0)
		run(t, r)
		srv.Create(ctx, objects.ConfigMap("ns", "b", objects.Data("v", "0")))
		synctest.Wait()
		if got, want := st.take(), []string{"replace [] rv=1"}; !slices.Equal(got, want) {
			t.Fatalf("calls %q, want %q", got, want)
		}
	})
}

// The reflector runs again after a run ends, with a new list from the
// resource version the first run reached.
func TestReflectorRunsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		srv := fake.NewTestServer(t, fake.Options{})
		srv.Create(ctx, objects.ConfigMap("ns", "a", objects.Data("v", "0")))
		st := newCallStore()
		r := NewNamedReflector("cms", srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &corev1.ConfigMap{}, st, 0)
		if r.LastSyncResourceVersion() != "" {
			t.Fatal("a resource version before any run")
		}
		for i := range 2 {
			srv.ResetCalls()
			stop := make(chan struct{})
			done := make(chan error)
			go func() { done <- r.ListAndWatch(stop) }()
			synctest.Wait()
			close(stop)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			// The second run starts from where the first one was.
			want := map[int]string{0: "", 1: srv.ResourceVersion()}[i]
			if calls := srv.Calls(); len(calls) == 0 || calls[0].Options.ResourceVersion != want {
				t.Fatalf("run %d: first call %v, want one from resource version %q", i, calls, want)
			}
		}
		rv := srv.ResourceVersion()
		want := []string{"replace [a@" + rv + "] rv=" + rv, "replace [a@" + rv + "] rv=" + rv}
		if got := st.take(); !slices.Equal(got, want) || r.LastSyncResourceVersion() != rv {
			t.Fatalf("calls %q rv %q, want %q rv %q", got, r.LastSyncResourceVersion(), want, rv)
		}
	})
}

// failingResync is a callStore whose Resync fails.
type failingResync struct{ *callStore }

func (s failingResync) Resync() error { s.log("resync"); return errBoom }

// A failed Resync starts a new list, which rebuilds the store (client-go's
// reflector ends its ListAndWatch and lists again).
func TestReflectorRelistsAfterFailedResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		srv.Create(t.Context(), objects.ConfigMap("ns", "a", objects.Data("v", "0")))
		st := failingResync{newCallStore()}
		r := NewNamedReflector("cms", srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &corev1.ConfigMap{}, st, time.Minute)
		r.ShouldResync = everyOther()
		run(t, r)
		time.Sleep(time.Minute)
		synctest.Wait()
		want := []string{"replace [a@1] rv=1", "resync", "replace [a@1] rv=1"}
		if got := st.take(); !slices.Equal(got, want) {
			t.Fatalf("calls %q, want %q", got, want)
		}
	})
}

// With client-go's WatchListClient feature off, the reflector lists in
// pages, as client-go's does; on (the default), it streams.
func TestReflectorHonoursWatchListClient(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint("WatchListClient=", on), func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, features.WatchListClient, on)
			synctest.Test(t, func(t *testing.T) {
				srv := fake.NewTestServer(t, fake.Options{})
				srv.Create(t.Context(), objects.ConfigMap("ns", "a", objects.Data("v", "0")))
				st := newCallStore()
				r := NewNamedReflector("cms", srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &corev1.ConfigMap{}, st, 0)
				run(t, r)
				calls := srv.Calls()
				if len(calls) == 0 || (calls[0].Verb == fake.VerbList) == on {
					t.Fatalf("first call %v with WatchListClient=%v", calls, on)
				}
				if err := fake.Converged(srv, fake.LWOptions{Resource: cmGVR}, st.List()); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// A 404 is retried on the schedule of any failure (800 ms, then doubling,
// with jitter), as client-go's reflector retries it, not after listwatch's
// Backoff.Slow: kube-controller-manager's garbage collector test serves a
// 404 and then the list, and waits for the informer as long as client-go
// takes.
func TestInformerRetriesNotFoundLikeClientGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		srv := fake.NewTestServer(t, fake.Options{})
		srv.Create(ctx, objects.ConfigMap("ns", "a", objects.Data("v", "0")))
		if err := srv.FailNext(fake.Failure{Kind: fake.NotFound, Times: 2}); err != nil {
			t.Fatal(err)
		}
		inf := NewSharedIndexInformer(srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &corev1.ConfigMap{}, 0, nil)
		start := time.Now()
		go inf.RunWithContext(ctx)
		for !inf.HasSynced() {
			time.Sleep(100 * time.Millisecond)
		}
		// The first retry waits 800 ms plus up to as much again of jitter.
		if took := time.Since(start); took > 1700*time.Millisecond {
			t.Fatalf("synced %v after a 404, want within client-go's first backoff (1.6 s)", took)
		}
	})
}
