package retrywatcher

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	"github.com/listwatch/listwatch/reflector"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
)

// hostileServer is a scripted watch source that draws a misbehaviour for
// every watch call from a seeded rand: close at once, a bookmark then close,
// a few events then close, ERROR events (500, 429, rarely 410), replayed
// older events, bookmarks with a malformed resource version, open errors
// (500, 503, 429, connection refused, rarely 410), and sometimes a healthy watch
// that stays open a while. After the random phase it turns healthy: every
// watch gets everything it has not seen and stays open, so a watcher that
// lost nothing catches up.
type hostileServer struct {
	mu  sync.Mutex
	rnd *rand.Rand
	// history holds the server's events in RV order; history[i] has RV
	// base+i+1. Writes happen between watch calls during the random phase.
	history []watch.Event
	base    uint64
	// randomCalls is how many watch calls get a random behaviour.
	randomCalls int
	// reqs records every watch call.
	reqs []hostileReq
	// caughtUp is set when a healthy-phase stream has sent the whole history.
	caughtUp bool
	// bad records protocol violations by the client, e.g. a watch from a
	// malformed resource version.
	bad []string
	// guard blocks a client that loops without backing off.
	guard runawayGuard
	wg    sync.WaitGroup
}

// hostileReq is one watch call: when it was made, from which RV, what the
// server did, whether its stream carried an event newer than rv, and when
// the answer ended (the error returned, or the stream closed). end is zero
// while the stream is open.
type hostileReq struct {
	at, end   time.Time
	rv        string
	behaviour string
	sentNew   bool
}

func newHostileServer(seed uint64) *hostileServer {
	s := &hostileServer{rnd: rand.New(rand.NewPCG(seed, 14)), base: 100}
	s.randomCalls = 20 + s.rnd.IntN(30)
	s.write(1 + s.rnd.IntN(3))
	return s
}

func (s *hostileServer) head() uint64 { return s.base + uint64(len(s.history)) }

// write appends n events: creates, updates and deletes of a few objects.
func (s *hostileServer) write(n int) {
	for range n {
		rv := s.head() + 1
		typ := []watch.EventType{watch.Added, watch.Modified, watch.Deleted}[s.rnd.IntN(3)]
		s.history = append(s.history, watch.Event{Type: typ, Object: cm(fmt.Sprintf("o%d", s.rnd.IntN(5)), rv)})
	}
}

// from returns the events after RV from.
func (s *hostileServer) from(from uint64) []watch.Event {
	i := int(min(max(from, s.base), s.head()) - s.base)
	return slices.Clone(s.history[i:])
}

func bookmark(rv string) watch.Event {
	return watch.Event{Type: watch.Bookmark, Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}}
}

func statusEvent(err *apierrors.StatusError) watch.Event {
	return watch.Event{Type: watch.Error, Object: &err.ErrStatus}
}

var errRefused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

func (s *hostileServer) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	now := time.Now()
	if !s.guard.admit(now) {
		s.mu.Unlock()
		<-ctx.Done()
		return nil, ctx.Err()
	}
	defer s.mu.Unlock()
	idx := len(s.reqs)
	s.reqs = append(s.reqs, hostileReq{at: now, rv: opts.ResourceVersion})
	req := &s.reqs[idx]
	from, err := strconv.ParseUint(opts.ResourceVersion, 10, 64)
	if err != nil || from == 0 {
		s.bad = append(s.bad, fmt.Sprintf("watch call %d from malformed resource version %q", idx, opts.ResourceVersion))
		req.end, req.behaviour = now, "bad-request"
		return nil, apierrors.NewBadRequest("invalid resource version")
	}
	if idx >= s.randomCalls {
		req.behaviour = "healthy"
		evs := s.from(from)
		req.sentNew = len(evs) > 0
		return s.stream(idx, evs, nil, -1), nil
	}
	if s.rnd.IntN(3) == 0 {
		s.write(1 + s.rnd.IntN(3))
	}
	fail := func(b string, err error) (watch.Interface, error) {
		req.end, req.behaviour = now, b
		return nil, err
	}
	some := func(n int) []watch.Event {
		evs := s.from(from)
		return evs[:min(len(evs), n)]
	}
	var (
		evs  []watch.Event
		last *watch.Event
		stay time.Duration
	)
	// A 410 ends the watcher: keep it rare (about one schedule in three) so
	// that most schedules reach the healthy phase.
	if s.rnd.IntN(200) == 0 {
		return fail("open-410", apierrors.NewResourceExpired("too old resource version"))
	}
	switch r := s.rnd.IntN(100); {
	case r < 2:
		return fail("open-503", apierrors.NewServiceUnavailable("unavailable"))
	case r < 8:
		return fail("open-429", apierrors.NewTooManyRequests("slow down", s.rnd.IntN(4)))
	case r < 14:
		return fail("open-500", apierrors.NewInternalError(errors.New("boom")))
	case r < 20:
		return fail("open-refused", errRefused)
	case r < 32:
		req.behaviour = "close"
	case r < 44:
		// A bookmark promises every event up to its RV was sent, so an
		// honest one here can only repeat the RV watched from.
		req.behaviour = "bookmark-close"
		evs = []watch.Event{bookmark(opts.ResourceVersion)}
	case r < 56:
		req.behaviour = "events-close"
		evs = some(1 + s.rnd.IntN(3))
		if n := len(evs); n > 0 && s.rnd.IntN(2) == 0 {
			req.behaviour = "events-bookmark-close"
			evs = append(evs, bookmark(evs[n-1].Object.(*corev1.ConfigMap).ResourceVersion))
		}
	case r < 66:
		req.behaviour = "events-error"
		evs = some(s.rnd.IntN(3))
		var ev watch.Event
		switch s.rnd.IntN(40) {
		case 0:
			ev = statusEvent(apierrors.NewResourceExpired("too old resource version"))
		case 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12:
			ev = statusEvent(apierrors.NewTooManyRequests("slow down", s.rnd.IntN(4)))
		default:
			ev = statusEvent(apierrors.NewInternalError(errors.New("boom")))
		}
		last = &ev
	case r < 76:
		req.behaviour = "replay-close"
		back := uint64(1 + s.rnd.IntN(5))
		evs = s.from(from - min(from, back))
		evs = evs[:min(len(evs), int(back)+s.rnd.IntN(3))]
	case r < 88:
		bad := []string{"abc", "", "0", "-3", "12x"}[s.rnd.IntN(5)]
		req.behaviour = "malformed-bookmark-close:" + bad
		evs = append(some(s.rnd.IntN(2)), bookmark(bad))
	default:
		req.behaviour = "healthy-for-a-while"
		evs = s.from(from)
		stay = time.Duration(1+s.rnd.IntN(120)) * time.Second
	}
	for _, ev := range evs {
		if rv, _ := strconv.ParseUint(ev.Object.(*corev1.ConfigMap).ResourceVersion, 10, 64); ev.Type != watch.Bookmark && rv > from {
			req.sentNew = true
		}
	}
	return s.stream(idx, evs, last, stay), nil
}

// stream serves evs (then last, if set) on a new watch, then stays open for
// stay (for ever if negative) and closes, recording the end time.
func (s *hostileServer) stream(idx int, evs []watch.Event, last *watch.Event, stay time.Duration) watch.Interface {
	ch := make(chan watch.Event)
	w := watch.NewProxyWatcher(ch)
	healthy := stay < 0
	s.wg.Go(func() {
		defer func() {
			s.mu.Lock()
			s.reqs[idx].end = time.Now()
			s.mu.Unlock()
			close(ch)
		}()
		for _, ev := range evs {
			select {
			case ch <- ev:
			case <-w.StopChan():
				return
			}
		}
		if last != nil {
			select {
			case ch <- *last:
			case <-w.StopChan():
			}
			return
		}
		if healthy {
			s.mu.Lock()
			s.caughtUp = true
			s.mu.Unlock()
			<-w.StopChan()
			return
		}
		if stay > 0 {
			t := time.NewTimer(stay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-w.StopChan():
			}
		}
	})
	return w
}

// pacingWindow is the window of the rate property.
const pacingWindow = time.Minute

// checkPacing checks that the watch calls reqs kept to backoff b, and
// returns the most calls seen in any pacingWindow and the bound for that
// window.
//
// The model. Call k is free when the stream of call k-1 carried an event
// newer than the RV it was opened from (real progress: the watcher may
// reconnect at once, and the server's own writes bound how often that
// happens), or stayed open for at least b.Max (an idle watch ending:
// reconnecting at once is no faster than the backoff's slowest pace).
// Every other call is paced: if it is the j-th paced call since the last
// free one, it must come at least d_j = min(Initial·Factor^(j-1), Max)
// after the previous call's answer ended (its error, or its stream's
// close). d_j is the schedule without jitter; jitter and Retry-After only
// lengthen waits, and the machine's failure count never runs behind j, so
// this is what the backoff guarantees whatever the server does.
//
// The window bound follows. Take a window of length W and the calls in it.
// The first may come at any time. Every later one is free or paced, and a
// paced call's wait lies inside the window (it starts when the previous
// call, itself in the window, ended), disjoint from the other waits. With r
// free calls in the window there are at most r+1 runs of paced calls (the
// one running into the window, treated as fresh, which only loosens the
// bound since d_j grows with j, and one after each free call). So
//
//	calls ≤ 1 + r + maxPaced(r+1, W)
//
// where maxPaced(R, W) is the most waits of R runs that fit in W: fill the
// runs level by level, R waits of d_1, then R of d_2, ..., stopping at the
// first level that does not fit whole (levels cost more as they go, so
// this greedy count is the maximum). For the drop-in's default backoff
// (500ms doubling to 30s) and no free call, a minute holds at most
// 1 + 6 = 7 calls: the waits 0.5+1+2+4+8+16 = 31.5s fit, a seventh of 30s
// does not. client-go's RetryWatcher would allow 60.
func checkPacing(b reflector.Backoff, reqs []hostileReq) (most, bound int, err error) {
	b = b.WithDefaults(defaultBackoff)
	free := make([]bool, len(reqs))
	run := 0
	for k := 1; k < len(reqs); k++ {
		prev, cur := reqs[k-1], reqs[k]
		if prev.end.IsZero() || cur.at.Before(prev.end) {
			return 0, 0, fmt.Errorf("call %d at %v while call %d (%s) was still open", k, cur.at, k-1, prev.behaviour)
		}
		if prev.sentNew || prev.end.Sub(prev.at) >= b.Max {
			free[k], run = true, 0
			continue
		}
		run++
		if gap, need := cur.at.Sub(prev.end), b.Delay(run, nil); gap < need {
			return 0, 0, fmt.Errorf("call %d (paced #%d in its run, after %s) came %v after the previous answer ended, want >= %v",
				k, run, prev.behaviour, gap, need)
		}
	}
	for i := range reqs {
		r := 0
		for j := i; j < len(reqs) && reqs[j].at.Sub(reqs[i].at) < pacingWindow; j++ {
			if j > i && free[j] {
				r++
			}
			allowed := 1 + r + maxPaced(b, r+1, pacingWindow)
			if n := j - i + 1; n > allowed {
				return 0, 0, fmt.Errorf("calls %d..%d: %d in %v with %d free, the backoff allows %d", i, j, n, pacingWindow, r, allowed)
			} else if n > most || (n == most && allowed < bound) {
				most, bound = n, allowed
			}
		}
	}
	return most, bound, nil
}

// maxPaced is the most backoff waits of runs runs of b that fit in w (see
// checkPacing).
func maxPaced(b reflector.Backoff, runs int, w time.Duration) int {
	n := 0
	for j := 1; ; j++ {
		d := b.Delay(j, nil)
		m := min(runs, int(w/d))
		n += m
		w -= time.Duration(m) * d
		if m < runs {
			return n
		}
	}
}

// Whatever the server does, the RetryWatcher makes no more watch calls than
// its backoff allows (checkPacing: every retry waits its backoff, and no
// minute holds more calls than the schedule permits), and the consumer gets
// exactly the server's events after the initial RV, in order, without
// duplicates or gaps; or, when the server answered a watch with 410 (the
// watcher then ends by design, where client-go retries for ever), a correct
// prefix of them followed by that 410 as an ERROR event.
func TestHostileServerProperty(t *testing.T) {
	schedules := 1200
	if testing.Short() {
		schedules = 200
	}
	backoffs := []reflector.Backoff{
		{}, // the drop-in's default: 500ms doubling to 30s, no jitter
		{Initial: 800 * time.Millisecond, Factor: 2, Max: 30 * time.Second, Jitter: 0.5},
		{Initial: 100 * time.Millisecond, Factor: 1.5, Max: 5 * time.Second, Jitter: 1},
	}
	start := time.Now()
	var calls, maxCalls, stopped410 int
	// most[i] is the most calls in one pacingWindow under backoffs[i], and
	// bound[i] the bound for that window.
	most, bound := make([]int, len(backoffs)), make([]int, len(backoffs))
	for seed := range uint64(schedules) {
		b := backoffs[seed%uint64(len(backoffs))]
		synctest.Test(t, func(t *testing.T) {
			srv := newHostileServer(seed)
			initial := srv.head()
			// The malformed bookmarks and 410s are logged; keep the output readable.
			ctx := klog.NewContext(t.Context(), logr.Discard())
			rw, err := New(ctx, Options{ResourceVersion: strconv.FormatUint(initial, 10), Watcher: srv, Backoff: b,
				Rand: rand.New(rand.NewPCG(seed, 15))}) // jitter reproducible from the schedule's seed
			if err != nil {
				t.Fatal(err)
			}
			var got []watch.Event
			consumed := make(chan struct{})
			go func() {
				defer close(consumed)
				for ev := range rw.ResultChan() {
					got = append(got, ev)
				}
			}()
			began := time.Now()
			for {
				time.Sleep(time.Second)
				synctest.Wait()
				srv.mu.Lock()
				caughtUp, runaway := srv.caughtUp, srv.guard.tripped
				srv.mu.Unlock()
				if caughtUp || runaway || time.Since(began) > 2*time.Hour {
					break
				}
				select {
				case <-rw.Done():
				default:
					continue
				}
				break
			}
			rw.Stop()
			<-consumed
			srv.wg.Wait()

			fail := func(format string, args ...any) {
				t.Helper()
				var sb strings.Builder
				for i, r := range srv.reqs[:min(len(srv.reqs), 100)] {
					fmt.Fprintf(&sb, "  call %d +%v rv=%s %s new=%v (ended +%v)\n", i, r.at.Sub(began), r.rv, r.behaviour, r.sentNew, r.end.Sub(began))
				}
				t.Fatalf("seed %d, backoff %+v: %s\nstats %+v, err %v\ncalls:\n%s", seed, b, fmt.Sprintf(format, args...), rw.Stats(), rw.Err(), sb.String())
			}
			if srv.guard.tripped {
				fail("runaway: more than %d watch calls within one virtual second", runawayCalls)
			}
			if len(srv.bad) > 0 {
				fail("%v", srv.bad)
			}
			n, nBound, err := checkPacing(b, srv.reqs)
			if err != nil {
				fail("%v", err)
			}
			// Events: the server's, in order, from the initial RV on.
			want := srv.from(initial)
			gotEvents := got
			if n := len(got); n > 0 && got[n-1].Type == watch.Error {
				if st, ok := got[n-1].Object.(*metav1.Status); !ok || st.Code != 410 || !apierrors.IsResourceExpired(rw.Err()) {
					fail("ended with %s, Err %v; only a 410 may end it", describeEvent(got[n-1]), rw.Err())
				}
				gotEvents = got[:n-1]
				want = want[:min(len(want), len(gotEvents))]
				stopped410++
			} else if !srv.caughtUp {
				fail("never caught up (%d of %d events)", len(got), len(want))
			}
			render := func(evs []watch.Event) []string {
				out := make([]string, len(evs))
				for i, ev := range evs {
					out[i] = describeEvent(ev)
				}
				return out
			}
			if g, w := render(gotEvents), render(want); !slices.Equal(g, w) {
				fail("events differ:\ngot  %v\nwant %v", g, w)
			}
			calls += len(srv.reqs)
			maxCalls = max(maxCalls, len(srv.reqs))
			if i := seed % uint64(len(backoffs)); n > most[i] {
				most[i], bound[i] = n, nBound
			}
		})
		if t.Failed() {
			return
		}
	}
	t.Logf("%d schedules in %v: %d watch calls, at most %d in one schedule; %d ended with a 410", schedules,
		time.Since(start).Round(time.Millisecond), calls, maxCalls, stopped410)
	for i, b := range backoffs {
		t.Logf("backoff %+v: at most %d calls in one %v (bound for that window %d)", b, most[i], pacingWindow, bound[i])
	}
}
