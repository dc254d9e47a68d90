package reflector

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/fake"
)

// subject is a client under test: it starts syncing lw into a store of its
// own and returns a function reading that store as key → resource version.
type subject func(ctx context.Context, lw *fake.ListerWatcher, rng *rand.Rand) (versions func() map[string]string, done <-chan struct{})

// listwatchSubject runs this package's Reflector with a configuration drawn
// from rng: streaming mode, page size and watchdog vary per seed.
func listwatchSubject(ctx context.Context, lw *fake.ListerWatcher, rng *rand.Rand) (func() map[string]string, <-chan struct{}) {
	st := newMemStore[*corev1.Pod]()
	cfg := Config[*corev1.Pod]{
		WatchList: []WatchListMode{WatchListAuto, WatchListOff, WatchListForce}[rng.IntN(3)],
		PageSize:  []int64{2, 3, 500}[rng.IntN(3)],
		Rand:      rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())),
	}
	if rng.IntN(2) == 0 {
		cfg.IdleTimeout = 90 * time.Second
	}
	r, err := New(Options[*corev1.Pod]{Config: cfg, Source: lw, Store: st})
	if err != nil {
		panic(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.Run(ctx)
	}()
	return st.versions, done
}

// clientGoSubject runs client-go's cache.Reflector into a cache.Store.
func clientGoSubject(ctx context.Context, lw *fake.ListerWatcher, rng *rand.Rand) (func() map[string]string, <-chan struct{}) {
	st := cache.NewStore(cache.MetaNamespaceKeyFunc)
	r := cache.NewReflectorWithOptions(lw, &corev1.Pod{}, st, cache.ReflectorOptions{Name: "client-go"})
	if rng.IntN(2) == 0 {
		r.WatchListPageSize = 2
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.RunWithContext(ctx)
	}()
	return func() map[string]string {
		m := map[string]string{}
		for _, o := range st.List() {
			p := o.(*corev1.Pod)
			m[p.Namespace+"/"+p.Name] = p.ResourceVersion
		}
		return m
	}, done
}

// converge runs one seeded fault schedule against a fake apiserver and
// reports whether the subject's store ends equal to the server's objects.
func converge(t *testing.T, seed uint64, subj subject) (ok bool, detail string, stats fake.Stats) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	srv, err := fake.NewServer(fake.Options{
		Resources:       []fake.Resource{fake.Pods()},
		HistorySize:     5 + rng.IntN(20), // small: watches and continue tokens expire
		WatchBufferSize: 2 + rng.IntN(6),  // small: slow watches get closed
	})
	if err != nil {
		t.Fatal(err)
	}
	w := &writer{srv: srv, rng: rng, live: map[string]bool{}}
	for range rng.IntN(8) {
		w.write(t)
	}
	lw := srv.ListerWatcher(fake.LWOptions{Resource: fake.Pods().GVR, Namespace: "ns"})
	logger := logr.Discard()
	if testing.Verbose() && os.Getenv("SEED") != "" {
		logger = klog.Background()
	}
	ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logger))
	defer cancel()
	versions, done := subj(ctx, lw, rng)
	for range 20 + rng.IntN(60) {
		chaosStep(t, srv, w, rng)
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Millisecond)
	}
	srv.ClearFaults()
	srv.Up()
	// Converged once the faults stop, and still live: later writes arrive.
	detail = waitConverged(t, lw, versions)
	if detail == "" {
		for range 3 {
			w.write(t)
		}
		detail = waitConverged(t, lw, versions)
	}
	cancel()
	<-done
	return detail == "", detail, srv.Stats()
}

// waitConverged waits up to 20 virtual minutes for the subject's store to
// equal the server's objects; it returns "" or a diff.
func waitConverged(t *testing.T, lw *fake.ListerWatcher, versions func() map[string]string) string {
	want := serverVersions(t, lw)
	var got map[string]string
	for range 20 {
		time.Sleep(time.Minute)
		synctest.Wait()
		if got = versions(); maps.Equal(got, want) {
			return ""
		}
	}
	return fmt.Sprintf("store %s\nserver %s", render(got), render(want))
}

func render(m map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s@%s ", k, m[k])
	}
	return b.String()
}

func serverVersions(t *testing.T, lw *fake.ListerWatcher) map[string]string {
	obj, err := lw.ListWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("server list: %v", err)
	}
	m := map[string]string{}
	for _, p := range obj.(*corev1.PodList).Items {
		m[p.Namespace+"/"+p.Name] = p.ResourceVersion
	}
	return m
}

// writer creates, updates and deletes pods p0..p9 at random.
type writer struct {
	srv  *fake.Server
	rng  *rand.Rand
	live map[string]bool // names that exist on the server
	gen  int             // bumped by every update so it changes the object
}

func (w *writer) write(t *testing.T) {
	name := "p" + strconv.Itoa(w.rng.IntN(10))
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	var err error
	switch {
	case !w.live[name]:
		_, err = w.srv.Create(t.Context(), p)
		w.live[name] = true
	case w.rng.IntN(3) == 0:
		_, err = w.srv.Delete(t.Context(), p)
		delete(w.live, name)
	default:
		w.gen++
		p.Labels = map[string]string{"gen": strconv.Itoa(w.gen)}
		_, err = w.srv.Update(t.Context(), p)
	}
	if err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
}

var failureKinds = []fake.FailureKind{
	fake.Forbidden, fake.NotFound, fake.Expired, fake.TooManyRequests, fake.InternalError, fake.ConnectionRefused,
}

// chaosStep performs one random write or fault.
func chaosStep(t *testing.T, srv *fake.Server, w *writer, rng *rand.Rand) {
	switch p := rng.IntN(100); {
	case p < 50:
		w.write(t)
	case p < 62:
		f := fake.Failure{Kind: failureKinds[rng.IntN(len(failureKinds))], Times: 1 + rng.IntN(3),
			Verbs: fake.Verb(1 + rng.IntN(3)), RetryAfterSeconds: 1 + rng.IntN(3)}
		f.InStream = f.Kind != fake.ConnectionRefused && rng.IntN(2) == 0
		must(t, srv.FailNext(f))
	case p < 72:
		f := fake.WatchFault{Times: 1 + rng.IntN(2), CloseAfterEvents: rng.IntN(4),
			Delay: time.Duration(rng.IntN(2000)) * time.Millisecond, Stall: rng.IntN(4) == 0}
		must(t, srv.InjectWatchFault(f))
	case p < 78:
		srv.Down()
		time.Sleep(time.Duration(rng.IntN(5000)) * time.Millisecond)
		srv.Up()
	case p < 84:
		must(t, srv.Compact(srv.ResourceVersion()))
	case p < 90:
		srv.CloseWatches(fake.Pods().GVR)
	case p < 95:
		srv.Stall(fake.Pods().GVR)
		time.Sleep(time.Duration(rng.IntN(120)) * time.Second)
		srv.Unstall(fake.Pods().GVR)
	default:
		srv.ClearFaults()
	}
}

func must(t *testing.T, err error) {
	if err != nil {
		t.Fatal(err)
	}
}

// convergeSeeds runs seeds [0, n) of the fault schedule against subj. Each
// seed runs in its own synctest bubble; results are reported outside it so
// that one failing seed does not stop the others.
func convergeSeeds(t *testing.T, n int, subj subject) (failed []uint64) {
	var total fake.Stats
	for seed := range uint64(n) {
		var ok bool
		var detail string
		var st fake.Stats
		synctest.Test(t, func(t *testing.T) { ok, detail, st = converge(t, seed, subj) })
		total.Lists += st.Lists
		total.Watches += st.Watches
		total.StreamingWatches += st.StreamingWatches
		total.Events += st.Events
		total.Faults += st.Faults
		total.SlowWatchesClosed += st.SlowWatchesClosed
		if !ok {
			failed = append(failed, seed)
			if len(failed) <= 3 {
				t.Logf("seed %d did not converge:\n%s", seed, detail)
			}
		}
	}
	t.Logf("%d/%d seeds converged; server saw %+v", n-len(failed), n, total)
	return failed
}

// TestConvergeUnderFaults: under many seeded schedules of writes and faults
// (403, 404, 410, 429, 500, refused, in-stream errors, closed, delayed and
// stalled watches, server down, compaction), the store ends holding exactly
// the server's objects at their resource versions.
func TestConvergeUnderFaults(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 100
	}
	if failed := convergeSeeds(t, n, listwatchSubject); len(failed) > 0 {
		t.Errorf("%d seeds did not converge: %v", len(failed), failed)
	}
}

// TestConvergeClientGo runs client-go's cache.Reflector through the same
// harness, for comparison.
func TestConvergeClientGo(t *testing.T) {
	// client-go reports watch errors through utilruntime.HandleError, whose
	// global rate limiter remembers the time of the last error across
	// synctest bubbles (each starting in the year 2000) and then sleeps for
	// the difference, freezing the reflector. Replace it for this test.
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(context.Context, error, string, ...any) {}}
	t.Cleanup(func() { utilruntime.ErrorHandlers = saved })
	n := 1000
	if testing.Short() {
		n = 100
	}
	failed := convergeSeeds(t, n, clientGoSubject)
	t.Logf("client-go failed seeds: %v", failed)
}

// lossyStore drops every DELETED event: a reflector bug the harness must
// catch.
type lossyStore struct{ *memStore[*corev1.Pod] }

func (lossyStore) Delete(*corev1.Pod) error { return nil }

// TestConvergeHarnessCatchesLoss checks the harness itself: a store that
// loses deletions must fail to converge on some seeds.
func TestConvergeHarnessCatchesLoss(t *testing.T) {
	lossy := func(ctx context.Context, lw *fake.ListerWatcher, rng *rand.Rand) (func() map[string]string, <-chan struct{}) {
		st := lossyStore{newMemStore[*corev1.Pod]()}
		r, err := New(Options[*corev1.Pod]{Config: Config[*corev1.Pod]{WatchList: WatchListOff}, Source: lw, Store: st})
		if err != nil {
			panic(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = r.Run(ctx)
		}()
		return st.versions, done
	}
	if failed := convergeSeeds(t, 20, lossy); len(failed) == 0 {
		t.Error("the harness did not notice a store that drops deletions")
	}
}
