package retrywatcher

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
)

// runawayGuard stops a retry loop that ignores its backoff: once a server
// has seen more than runawayCalls calls within one virtual second, it
// blocks every later call until the caller's context ends, so that virtual
// time can move on and the test fails instead of spinning for ever.
type runawayGuard struct {
	second  time.Time
	n       int
	tripped bool
}

const runawayCalls = 1000

// admit records a call made at now and reports whether it may be served.
func (g *runawayGuard) admit(now time.Time) bool {
	if s := now.Truncate(time.Second); !s.Equal(g.second) {
		g.second, g.n = s, 0
	}
	g.n++
	g.tripped = g.tripped || g.n > runawayCalls
	return !g.tripped
}

// flatServer answers every watch call with the events serve returns for
// the call's resource version, then closes the stream. It records when
// each call came.
type flatServer struct {
	mu    sync.Mutex
	serve func(rv string) []watch.Event
	start time.Time
	calls []time.Duration
	rvs   []string
	guard runawayGuard
	wg    sync.WaitGroup
}

func (s *flatServer) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	now := time.Now()
	s.calls = append(s.calls, now.Sub(s.start))
	s.rvs = append(s.rvs, opts.ResourceVersion)
	if !s.guard.admit(now) {
		s.mu.Unlock()
		<-ctx.Done()
		return nil, ctx.Err()
	}
	evs := s.serve(opts.ResourceVersion)
	s.mu.Unlock()
	ch := make(chan watch.Event)
	w := watch.NewProxyWatcher(ch)
	s.wg.Go(func() {
		defer close(ch)
		for _, ev := range evs {
			select {
			case ch <- ev:
			case <-w.StopChan():
				return
			}
		}
	})
	return w, nil
}

// withinMinute returns the calls made in the first virtual minute.
func (s *flatServer) withinMinute() []time.Duration {
	var out []time.Duration
	for _, c := range s.calls {
		if c < time.Minute {
			out = append(out, c)
		}
	}
	return out
}

// defaultSchedule is when the drop-in's watch calls come while every watch
// fails to make progress, over 100 s: the first at once, then after the
// default backoff's 500ms, 1s, 2s, 4s, 8s, 16s and 30s (capped) waits.
var defaultSchedule = []time.Duration{0, 500 * time.Millisecond, 1500 * time.Millisecond, 3500 * time.Millisecond,
	7500 * time.Millisecond, 15500 * time.Millisecond, 31500 * time.Millisecond, 61500 * time.Millisecond,
	91500 * time.Millisecond}

// Every watch that ends without delivering an event backs off, whatever it
// sent before closing: nothing, a bookmark with a non-numeric or empty
// resource version (reported, not adopted), or valid bookmarks alone. The
// calls follow the backoff exactly, and the watcher keeps going. Before the
// fix, the malformed bookmarks made the drop-in re-watch more than 1000
// times at +0s (the runaway guard then cut it off), and an empty one ended
// the watcher with an error.
func TestWatchesWithoutEventsArePaced(t *testing.T) {
	for _, tc := range []struct {
		name string
		// serve is what each watch sends before closing.
		serve func(rv string) []watch.Event
		// rv is the resource version of each watch call: the last valid one.
		rv func(call int) string
		// malformed is how many bookmarks must be reported as malformed.
		malformed int64
	}{
		{name: "non-numeric bookmark", serve: func(string) []watch.Event { return []watch.Event{bookmark("abc")} },
			rv: func(int) string { return "10" }, malformed: int64(len(defaultSchedule))},
		{name: "empty bookmark", serve: func(string) []watch.Event { return []watch.Event{bookmark("")} },
			rv: func(int) string { return "10" }, malformed: int64(len(defaultSchedule))},
		{name: "close at once", serve: func(string) []watch.Event { return nil },
			rv: func(int) string { return "10" }},
		{name: "advancing bookmarks only", serve: func(rv string) []watch.Event {
			n, _ := strconv.Atoi(rv)
			return []watch.Event{bookmark(strconv.Itoa(n + 1)), bookmark(strconv.Itoa(n + 2))}
		}, rv: func(call int) string { return strconv.Itoa(10 + 2*call) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := &flatServer{start: time.Now(), serve: tc.serve}
				var logMu sync.Mutex
				var reports int64
				logger := funcr.New(func(_, args string) {
					if strings.Contains(args, "ignored a bookmark with a malformed resource version") {
						logMu.Lock()
						reports++
						logMu.Unlock()
					}
				}, funcr.Options{})
				rw, err := New(klog.NewContext(t.Context(), logger), Options{ResourceVersion: "10", Watcher: srv})
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(100 * time.Second)
				synctest.Wait()
				select {
				case ev, ok := <-rw.ResultChan():
					t.Errorf("consumer got %s (open %v), want nothing", describeEvent(ev), ok)
				default:
				}
				rw.Stop()
				<-rw.Done()
				srv.wg.Wait()
				t.Logf("%d watch calls in the first virtual minute (%d in 100s)", len(srv.withinMinute()), len(srv.calls))
				if !slices.Equal(srv.calls, defaultSchedule) {
					t.Fatalf("%d watch calls in 100s, the first at %v; want them at %v",
						len(srv.calls), srv.calls[:min(len(srv.calls), 10)], defaultSchedule)
				}
				for i, rv := range srv.rvs {
					if want := tc.rv(i); rv != want {
						t.Fatalf("watch call %d from RV %q, want %q (all: %v)", i, rv, want, srv.rvs)
					}
				}
				if st := rw.Stats(); st.Delivered != 0 || st.Malformed != tc.malformed || rw.Err() != nil {
					t.Fatalf("stats %+v, Err %v; want nothing delivered, %d malformed and no error", st, rw.Err(), tc.malformed)
				}
				if reports != tc.malformed {
					t.Fatalf("%d log lines about malformed bookmarks, want %d", reports, tc.malformed)
				}
			})
		})
	}
}
