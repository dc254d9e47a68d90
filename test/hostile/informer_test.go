package hostile

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
)

var (
	seedFlag  = flag.Int64("seed", -1, "run only this schedule of TestInformerHostileSchedules")
	schedules = flag.Int("schedules", 1000, "random schedules in TestInformerHostileSchedules (100 with -short)")
)

const (
	names    = 30 // the server's objects are drawn among this many names
	pageSize = 5
	// hostileFor is how long the server misbehaves; behaveFor is how long
	// it then behaves before the cache is compared with it: longer than the
	// backoff cap with jitter (60 s), the streaming-list deadline and a
	// watch timeout.
	hostileFor = 3 * time.Minute
	behaveFor  = 12 * time.Minute
	// perAttempt is the most requests one attempt of the reflector may make
	// without waiting: a streaming list, a paginated list's first page, a
	// second first page after a 410 (quorum read), the remaining pages of a
	// list of at most names objects, and the watch.
	perAttempt = 3 + names/pageSize + 1
	// attemptsPerMinute is what client-go's backoff (800 ms doubling to
	// 30 s, jitter only lengthening) lets through in any 60 s: from a fresh
	// backoff, attempts at 0, 0.8, 2.4, 5.6, 12, 24.8 and 50.4 s; plus one
	// after a watch that lived its full timeout.
	attemptsPerMinute = 8
	// steadyPerMinute is the same once the backoff has reached its cap:
	// at most two attempts 30 s apart in any 60 s, plus one.
	steadyPerMinute = 3
)

// TestInformerHostileSchedules is the property: over random schedules of
// server misbehaviour (each request draws a behaviour; one in four is
// served healthy), with a write every second,
//
//   - in any 60 s of virtual time the server gets at most
//     attemptsPerMinute × perAttempt requests (the backoff schedule), and
//   - once the server behaves, the informer is synced, its cache equals the
//     server's objects (names and resource versions), and every handler's
//     view (its notifications applied to a map) equals the cache, with no
//     notification that contradicts the view (an add of a known key, an
//     update or delete of an unknown one).
func TestInformerHostileSchedules(t *testing.T) {
	n := *schedules
	if testing.Short() {
		n = min(n, 100)
	}
	var worst windowCount
	for seed := range uint64(n) {
		if *seedFlag >= 0 && seed != uint64(*seedFlag) {
			continue
		}
		synctest.Test(t, func(t *testing.T) {
			srv := newServer(seed)
			mode := reflector.WatchListAuto
			if seed%2 == 1 {
				mode = reflector.WatchListOff
			}
			got := runInformerFor(t, srv, seed, mode, hostileFor)
			w := maxPerWindow(got.requests, time.Minute)
			if w.n > attemptsPerMinute*perAttempt {
				t.Errorf("seed %d: %d requests in the minute from %v (bound %d); they were: %v",
					seed, w.n, w.from, attemptsPerMinute*perAttempt, w.sample)
			}
			if w.n > worst.n {
				worst = w
			}
		})
		if t.Failed() {
			t.Fatalf("seed %d failed; rerun with -run TestInformerHostileSchedules -seed %d", seed, seed)
		}
	}
	t.Logf("%d schedules; the busiest minute of any schedule had %d requests (bound %d)",
		n, worst.n, attemptsPerMinute*perAttempt)
}

// TestInformerForcedBehaviour forces one misbehaviour on every request that
// can show it, for ten minutes, then lets the server behave, with streaming
// lists and with paginated ones. Failures must have pushed the backoff to
// its cap: in the last five hostile minutes at most steadyPerMinute
// attempts a minute. Unless every request fails, a way to sync is left
// (a paginated list when streams fail, a whole list when pages repeat, a
// paginated list when the end bookmark never comes), and the informer must
// find it while the server is still hostile: synced within syncWithin.
// Either way it ends synced and equal.
func TestInformerForcedBehaviour(t *testing.T) {
	const syncWithin = 5 * time.Minute
	for _, mode := range []reflector.WatchListMode{reflector.WatchListAuto, reflector.WatchListOff} {
		for b := behaviour(1); b < numBehaviours; b++ {
			t.Run(fmt.Sprintf("%s/streaming=%t", b, mode == reflector.WatchListAuto), func(t *testing.T) {
				forced(t, b, mode, syncWithin)
			})
		}
	}
}

func forced(t *testing.T, b behaviour, mode reflector.WatchListMode, syncWithin time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		srv := newServer(uint64(b))
		srv.force = b
		got := runInformerFor(t, srv, uint64(b), mode, 10*time.Minute)
		if failure(b) == nil && (got.syncedAt.IsZero() || got.syncedAt.Sub(got.start) > syncWithin) {
			t.Errorf("not synced within %v of a server that always does %v (synced at %v)",
				syncWithin, b, got.syncedAt.Sub(got.start))
		}
		var late int
		for _, r := range got.requests {
			if r.at.Sub(got.start) >= 5*time.Minute && r.at.Sub(got.start) < 10*time.Minute {
				late++
			}
		}
		if bound := 5 * steadyPerMinute * perAttempt; late > bound {
			t.Errorf("%d requests in minutes 5–10 of %v (bound %d): %v", late, b, bound, tail(got.requests, 20))
		}
		w := maxPerWindow(got.requests, time.Minute)
		t.Logf("busiest minute %d requests; synced at %v; %d requests in all", w.n, got.syncedAt.Sub(got.start), len(got.requests))
		if w.n > attemptsPerMinute*perAttempt {
			t.Errorf("%d requests in the minute from %v (bound %d): %v", w.n, w.from, attemptsPerMinute*perAttempt, w.sample)
		}
	})
}

// result is what one run observed.
type result struct {
	start    time.Time
	syncedAt time.Time // zero if never seen synced
	requests []request
}

// runInformerFor runs an informer against srv: hostile for d with a write
// every second, then behaving for behaveFor; then it checks that the
// informer is synced and that its cache and its handler's view equal the
// server.
func runInformerFor(t *testing.T, srv *server, seed uint64, mode reflector.WatchListMode, d time.Duration) result {
	t.Helper()
	start := time.Now()
	for range names / 2 {
		srv.churn(names)
	}
	inf, err := informer.New(informer.Options[*corev1.ConfigMap]{
		Name:   "hostile",
		Source: srv,
		Reflector: reflector.Config[*corev1.ConfigMap]{
			PageSize:  pageSize,
			WatchList: mode,
			Rand:      rand.New(rand.NewPCG(seed, 1)),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	v := &view{objs: map[string]string{}}
	if _, err := inf.AddHandler(v.handler(), informer.HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logr.Discard()))
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	var syncedAt time.Time
	for range int(d / time.Second) {
		time.Sleep(time.Second)
		srv.churn(names)
		if syncedAt.IsZero() && inf.HasSynced() {
			syncedAt = time.Now()
		}
	}
	srv.setHostile(false)
	time.Sleep(behaveFor)
	synctest.Wait()
	if syncedAt.IsZero() && inf.HasSynced() {
		syncedAt = time.Now()
	}

	want := srv.truth()
	if srv.ranAway() {
		t.Errorf("seed %d: the informer ran away: %d requests within one virtual second; the last: %v",
			seed, runawayLimit, tail(srv.history(), 12))
	}
	if !inf.HasSynced() {
		t.Errorf("seed %d: not synced after the server behaved for %v: %+v", seed, behaveFor, inf.Status())
	}
	if got := cached(inf); !maps.Equal(got, want) {
		t.Errorf("seed %d: cache differs from the server: %s", seed, diff(got, want))
	}
	if got, bad := v.snapshot(); !maps.Equal(got, want) || len(bad) > 0 {
		t.Errorf("seed %d: handler view differs from the server: %s; contradictions: %v", seed, diff(got, want), bad)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	return result{start: start, syncedAt: syncedAt, requests: srv.history()}
}

func cached(inf *informer.Informer[*corev1.ConfigMap]) map[string]string {
	out := map[string]string{}
	for _, o := range inf.Reader().List() {
		out[o.Name] = o.ResourceVersion
	}
	return out
}

// view is a handler that applies its notifications to a map and records
// any notification that contradicts what it already knows.
type view struct {
	mu   sync.Mutex
	objs map[string]string // name → resource version
	bad  []string
}

func (v *view) handler() informer.HandlerFuncs[*corev1.ConfigMap] {
	return informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(o *corev1.ConfigMap, _ bool) {
			v.mu.Lock()
			defer v.mu.Unlock()
			if _, ok := v.objs[o.Name]; ok {
				v.bad = append(v.bad, "add of known "+o.Name)
			}
			v.objs[o.Name] = o.ResourceVersion
		},
		UpdateFunc: func(_, o *corev1.ConfigMap) {
			v.mu.Lock()
			defer v.mu.Unlock()
			if _, ok := v.objs[o.Name]; !ok {
				v.bad = append(v.bad, "update of unknown "+o.Name)
			}
			v.objs[o.Name] = o.ResourceVersion
		},
		DeleteFunc: func(o *corev1.ConfigMap, _ bool) {
			v.mu.Lock()
			defer v.mu.Unlock()
			if _, ok := v.objs[o.Name]; !ok {
				v.bad = append(v.bad, "delete of unknown "+o.Name)
			}
			delete(v.objs, o.Name)
		},
	}
}

func (v *view) snapshot() (map[string]string, []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return maps.Clone(v.objs), append([]string(nil), v.bad...)
}

func diff(got, want map[string]string) string {
	var out []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			out = append(out, "missing "+k+"@"+w)
		} else if g != w {
			out = append(out, fmt.Sprintf("%s at %s, want %s", k, g, w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			out = append(out, "extra "+k+"@"+g)
		}
	}
	return fmt.Sprint(out)
}

// windowCount is the busiest window of a run.
type windowCount struct {
	n      int
	from   time.Duration // offset of the window from the first request
	sample []string      // the first requests of the window
}

// maxPerWindow returns the most requests made in any window of length w.
func maxPerWindow(rs []request, w time.Duration) windowCount {
	var best windowCount
	j := 0
	for i := range rs {
		for rs[i].at.Sub(rs[j].at) >= w {
			j++
		}
		if n := i - j + 1; n > best.n {
			best = windowCount{n: n, from: rs[j].at.Sub(rs[0].at), sample: describe(rs[j:min(i+1, j+12)])}
		}
	}
	return best
}

func tail(rs []request, n int) []string { return describe(rs[max(0, len(rs)-n):]) }

func describe(rs []request) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%s(%v)@%v", r.what, r.how, r.at.Sub(rs[0].at).Round(time.Millisecond))
	}
	return out
}
