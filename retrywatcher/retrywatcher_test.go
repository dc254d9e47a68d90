package retrywatcher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// impl constructs a RetryWatcher-like watch; the same scenarios run against
// listwatch's and client-go's.
type impl struct {
	name string
	new  func(ctx context.Context, rv string, w cache.WatcherWithContext) (watch.Interface, <-chan struct{}, error)
}

var impls = []impl{
	{"listwatch", func(ctx context.Context, rv string, w cache.WatcherWithContext) (watch.Interface, <-chan struct{}, error) {
		rw, err := New(ctx, Options{ResourceVersion: rv, Watcher: w})
		if err != nil {
			return nil, nil, err
		}
		return rw, rw.Done(), nil
	}},
	{"client-go", func(ctx context.Context, rv string, w cache.WatcherWithContext) (watch.Interface, <-chan struct{}, error) {
		rw, err := watchtools.NewRetryWatcherWithContext(ctx, rv, w)
		if err != nil {
			return nil, nil, err
		}
		return rw, rw.Done(), nil
	}},
}

// collect reads n events (or until the channel closes) and renders them.
func collect(ch <-chan watch.Event, n int) []string {
	var out []string
	for len(out) < n {
		ev, ok := <-ch
		if !ok {
			break
		}
		out = append(out, describeEvent(ev))
	}
	return out
}

func expected(from, to uint64) []string {
	var out []string
	for rv := from; rv <= to; rv++ {
		out = append(out, describeEvent(watch.Event{Type: watch.Modified, Object: cm(fmt.Sprintf("o%d", rv%10), rv)}))
	}
	return out
}

func runScenario(t *testing.T, srv *logServer, rv string, body func(t *testing.T, rw watch.Interface)) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := srv.clone()
				rw, done, err := im.new(t.Context(), rv, s)
				if err != nil {
					t.Fatal(err)
				}
				body(t, rw)
				rw.Stop()
				<-done
				s.wg.Wait()
			})
		})
	}
}

func (s *logServer) clone() *logServer {
	return &logServer{events: s.events, base: s.base, compacted: s.compacted,
		failNext: slices.Clone(s.failNext), cutAfter: s.cutAfter, replay: s.replay, endWith: s.endWith}
}

// A stream cut every 7 events loses nothing and repeats nothing.
func TestStreamCutsLoseNothing(t *testing.T) {
	srv := &logServer{base: 10, cutAfter: 7}
	srv.record(100)
	runScenario(t, srv, "10", func(t *testing.T, rw watch.Interface) {
		got := collect(rw.ResultChan(), 100)
		if want := expected(11, 110); !slices.Equal(got, want) {
			t.Fatalf("events differ:\ngot  %v\nwant %v", got, want)
		}
	})
}

// A server that replays events the client already saw: listwatch drops the
// duplicates; client-go passes them on (shown here, not required of it).
func TestReplayedEventsAreDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &logServer{base: 10, cutAfter: 5, replay: 3}
		srv.record(30)
		rw, err := New(t.Context(), Options{ResourceVersion: "10", Watcher: srv})
		if err != nil {
			t.Fatal(err)
		}
		got := collect(rw.ResultChan(), 30)
		if want := expected(11, 40); !slices.Equal(got, want) {
			t.Fatalf("events differ:\ngot  %v\nwant %v", got, want)
		}
		rw.Stop()
		<-rw.Done()
		srv.wg.Wait()
		if st := rw.Stats(); st.Stale == 0 || st.Delivered != 30 {
			t.Fatalf("stats = %+v, want stale > 0 and 30 delivered", st)
		}
	})
}

// 410 mid-stream: one ERROR event carrying the Status, then the channel
// closes. Both libraries agree.
func TestGoneInStreamStops(t *testing.T) {
	gone := apierrors.NewResourceExpired("too old resource version: 12 (20)")
	srv := &logServer{base: 10, endWith: &watch.Event{Type: watch.Error, Object: &gone.ErrStatus}}
	srv.record(4)
	runScenario(t, srv, "10", func(t *testing.T, rw watch.Interface) {
		got := collect(rw.ResultChan(), 10)
		want := append(expected(11, 14), "ERROR code=410 reason=Expired")
		if !slices.Equal(got, want) {
			t.Fatalf("events differ:\ngot  %v\nwant %v", got, want)
		}
	})
}

// 410 when opening the watch: listwatch reports it and stops; client-go
// retries forever without telling the consumer anything.
func TestGoneOnOpen(t *testing.T) {
	srv := &logServer{base: 10, compacted: 12}
	srv.record(4)
	synctest.Test(t, func(t *testing.T) {
		rw, err := New(t.Context(), Options{ResourceVersion: "10", Watcher: srv})
		if err != nil {
			t.Fatal(err)
		}
		got := collect(rw.ResultChan(), 10)
		if want := []string{"ERROR code=410 reason=Expired"}; !slices.Equal(got, want) {
			t.Fatalf("events = %v, want %v", got, want)
		}
		<-rw.Done()
		if !apierrors.IsResourceExpired(rw.Err()) {
			t.Fatalf("Err() = %v, want a 410", rw.Err())
		}
	})
	synctest.Test(t, func(t *testing.T) {
		s := srv.clone()
		rw, err := watchtools.NewRetryWatcherWithContext(t.Context(), "10", s)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute) // fake time inside the bubble
		synctest.Wait()
		select {
		case ev := <-rw.ResultChan():
			t.Fatalf("client-go delivered %v", describeEvent(ev))
		default:
		}
		rw.Stop()
		<-rw.Done()
		s.mu.Lock()
		defer s.mu.Unlock()
		t.Logf("client-go made %d watch calls in one minute after a 410, delivering nothing", len(s.watchRVs))
	})
}

// 429 bursts are retried no sooner than Retry-After, and nothing is lost.
func TestThrottledRetriesHonourRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &logServer{base: 10}
		for range 5 {
			srv.failNext = append(srv.failNext, apierrors.NewTooManyRequests("slow down", 3))
		}
		srv.record(20)
		start := time.Now()
		rw, err := New(t.Context(), Options{ResourceVersion: "10", Watcher: srv})
		if err != nil {
			t.Fatal(err)
		}
		got := collect(rw.ResultChan(), 20)
		if elapsed := time.Since(start); elapsed < 15*time.Second {
			t.Errorf("5 throttled attempts took %v, want >= 15s", elapsed)
		}
		if want := expected(11, 30); !slices.Equal(got, want) {
			t.Fatalf("events differ:\ngot  %v\nwant %v", got, want)
		}
		rw.Stop()
		<-rw.Done()
		srv.wg.Wait()
		if st := rw.Stats(); st.Retries["throttled"] != 5 || st.Watches != 6 {
			t.Fatalf("stats = %+v, want 5 throttled retries and 6 watches", st)
		}
	})
}

// 403 is not retried: the consumer gets the Status and the watcher stops.
func TestForbiddenStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &logServer{base: 10, failNext: []error{apierrors.NewForbidden(gr, "", errors.New("no RBAC"))}}
		rw, err := New(t.Context(), Options{ResourceVersion: "10", Watcher: srv})
		if err != nil {
			t.Fatal(err)
		}
		got := collect(rw.ResultChan(), 10)
		if want := []string{"ERROR code=403 reason=Forbidden"}; !slices.Equal(got, want) {
			t.Fatalf("events = %v, want %v", got, want)
		}
		<-rw.Done()
		if !apierrors.IsForbidden(rw.Err()) {
			t.Fatalf("Err() = %v", rw.Err())
		}
	})
}

// Stop is idempotent, closes ResultChan and Done, and leaves no goroutine.
func TestStopIsIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &logServer{base: 10}
		rw, err := New(t.Context(), Options{ResourceVersion: "10", Watcher: srv})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		rw.Stop()
		rw.Stop()
		<-rw.Done()
		if _, ok := <-rw.ResultChan(); ok {
			t.Fatal("ResultChan still open after Done")
		}
		rw.Stop()
		srv.wg.Wait()
		if rw.Err() != nil {
			t.Fatalf("Err() after Stop = %v, want nil", rw.Err())
		}
	})
}

func TestRejectsUnresumableResourceVersions(t *testing.T) {
	for _, rv := range []string{"", "0"} {
		if _, err := New(t.Context(), Options{ResourceVersion: rv, Watcher: &logServer{}}); !errors.Is(err, ErrInitialResourceVersion) {
			t.Errorf("rv %q: err = %v, want ErrInitialResourceVersion", rv, err)
		}
	}
}

// Relist mode: a compaction gap is bridged by a list whose differences are
// delivered; the consumer's view ends equal to the server's.
func TestRelistModeBridgesGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &logServer{base: 10}
		srv.record(10)
		list, _ := srv.ListWithContext(t.Context(), metaListAll)
		known, rv, _ := listItems(list)
		srv.record(25) // o0..o9 all modified again
		srv.compacted = 30
		rw, err := New(t.Context(), Options{ResourceVersion: rv, Watcher: srv, Lister: srv, Known: known})
		if err != nil {
			t.Fatal(err)
		}
		view := map[string]string{}
		for _, obj := range known {
			acc, _ := meta.Accessor(obj)
			view[acc.GetName()] = acc.GetResourceVersion()
		}
		for len(view) != 10 || view["o5"] != "45" {
			ev := <-rw.ResultChan()
			acc, err := meta.Accessor(ev.Object)
			if err != nil {
				t.Fatalf("unexpected event %s", describeEvent(ev))
			}
			view[acc.GetName()] = acc.GetResourceVersion()
		}
		rw.Stop()
		<-rw.Done()
		srv.wg.Wait()
		if st := rw.Stats(); st.Lists != 1 {
			t.Fatalf("stats = %+v, want one list", st)
		}
	})
}

// rvOnly is an object with a resource version and nothing else, as in
// client-go's own RetryWatcher tests: that is all a RetryWatcher needs.
type rvOnly struct{ rv string }

func (o rvOnly) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
func (o rvOnly) DeepCopyObject() runtime.Object   { return o }
func (o rvOnly) GetResourceVersion() string       { return o.rv }

// Objects that only have GetResourceVersion are delivered and resumed from,
// by both libraries: each watch sends two events and a bookmark at the
// last one, then closes; the consumer gets RVs 11..20 once each, in order.
// (listwatch's drop-in used to require full object metadata and stop.)
func TestResourceVersionOnlyObjects(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := &flatServer{start: time.Now(), serve: func(rv string) []watch.Event {
					n, _ := strconv.Atoi(rv)
					var evs []watch.Event
					for i := n + 1; i <= min(n+2, 20); i++ {
						evs = append(evs, watch.Event{Type: watch.Modified, Object: rvOnly{strconv.Itoa(i)}})
					}
					return append(evs, watch.Event{Type: watch.Bookmark, Object: rvOnly{strconv.Itoa(min(n+2, 20))}})
				}}
				rw, done, err := im.new(t.Context(), "10", srv)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for range 10 {
					ev := <-rw.ResultChan()
					if ev.Type != watch.Modified {
						t.Fatalf("after %v: got %s", got, describeEvent(ev))
					}
					got = append(got, ev.Object.(rvOnly).rv)
				}
				rw.Stop()
				<-done
				srv.wg.Wait()
				want := []string{"11", "12", "13", "14", "15", "16", "17", "18", "19", "20"}
				if !slices.Equal(got, want) {
					t.Fatalf("got RVs %v, want %v", got, want)
				}
			})
		})
	}
}
