package reflector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/store"
)

// runReflector starts r.Run in the bubble and returns a function that stops
// it and checks it returned nil.
func runReflector[T store.Object](t *testing.T, r *Reflector[T]) (stop func()) {
	ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logr.Discard()))
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	synctest.Wait()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

func newTestReflector(t *testing.T, lw *scriptedLW, st Store[*corev1.Pod], cfg Config[*corev1.Pod]) *Reflector[*corev1.Pod] {
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(1, 1))
	}
	r, err := New(Options[*corev1.Pod]{Config: cfg, Source: lw, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var timeoutRE = regexp.MustCompile(` timeout=(\d+)s`)

// checkCalls compares the lister-watcher's calls with want, after checking
// that every watch timeout lies in [300s, 600s) and removing it.
func checkCalls(t *testing.T, lw *scriptedLW, want []string) {
	t.Helper()
	got := lw.history()
	for i, c := range got {
		if m := timeoutRE.FindStringSubmatch(c); m != nil {
			if s, _ := strconv.Atoi(m[1]); s < 300 || s >= 600 {
				t.Errorf("call %d: timeout %ds outside [300s,600s)", i, s)
			}
			got[i] = timeoutRE.ReplaceAllString(c, "")
		}
	}
	if d := diffLines(got, want); d != "" {
		t.Errorf("calls:\n%s", d)
	}
}

func checkStore(t *testing.T, st *memStore[*corev1.Pod], want string) {
	t.Helper()
	if got := st.contents(); got != want {
		t.Errorf("store = %q, want %q", got, want)
	}
}

// TestRunPagedListThenWatch drives the shell through a paged list, watch
// events, a 410 and a relist, and checks the exact request sequence.
func TestRunPagedListThenWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw, st := newScriptedLW(t), newMemStore[*corev1.Pod]()
		w1, w2, w3 := newFakeWatch(), newFakeWatch(), newFakeWatch()
		lw.list(podList("10", "c1", "a", "b"), nil)
		lw.list(podList("10", "", "c"), nil)
		lw.watch(w1, nil)
		lw.list(podList("20", "", "a", "d"), nil)
		lw.watch(w2, nil)
		lw.watch(w3, nil)
		r := newTestReflector(t, lw, st, Config[*corev1.Pod]{PageSize: 2, WatchList: WatchListOff})
		stop := runReflector(t, r)
		checkStore(t, st, "ns/a@10 ns/b@10 ns/c@10")

		w1.Add(objects.Pod("ns", "d", objects.RV("11")))
		w1.Modify(objects.Pod("ns", "a", objects.RV("12")))
		w1.Action(watch.Bookmark, bookmark("15", false))
		synctest.Wait()
		checkStore(t, st, "ns/a@12 ns/b@10 ns/c@10 ns/d@11")
		if rv := r.LastSyncResourceVersion(); rv != "15" {
			t.Errorf("LastSyncResourceVersion = %q, want 15", rv)
		}
		w1.Error(statusObject("410"))
		synctest.Wait()
		if st := r.Status(); st.Phase != PhaseBackoff || st.Reason != ReasonExpired {
			t.Errorf("after 410: %+v", st)
		}
		time.Sleep(time.Minute) // past the backoff; the relist replaces everything
		synctest.Wait()
		checkStore(t, st, "ns/a@20 ns/d@20")
		time.Sleep(2 * time.Minute)
		w2.Stop() // the server closes a long-lived watch: re-watch at once
		synctest.Wait()
		stop()
		if !w1.IsStopped() || !w3.IsStopped() {
			t.Error("a watch was left open")
		}
		checkCalls(t, lw, []string{
			`list rv="0" limit=2`,
			`list continue=c1 limit=2`,
			`watch rv="10" bookmarks`,
			`list rv="15" limit=2`, // the server paged RV="0": keep paging
			`watch rv="20" bookmarks`,
			`watch rv="20" bookmarks`,
		})
		if got := st.calls(); !contains(got, "progress 15") {
			t.Errorf("bookmark did not reach the store: %v", got)
		}
	})
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// TestRunStreamingList: a streaming list fills the store with one Replace at
// the end bookmark and the same stream carries on as the watch.
func TestRunStreamingList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw, st := newScriptedLW(t), newMemStore[*corev1.Pod]()
		w := newFakeWatch()
		lw.watch(w, nil)
		r := newTestReflector(t, lw, st, Config[*corev1.Pod]{})
		stop := runReflector(t, r)
		w.Add(objects.Pod("ns", "a", objects.RV("3")))
		w.Add(objects.Pod("ns", "b", objects.RV("4")))
		synctest.Wait()
		if r.HasSynced() || st.contents() != "" {
			t.Fatal("synced before the end bookmark")
		}
		w.Action(watch.Bookmark, bookmark("5", true))
		w.Modify(objects.Pod("ns", "a", objects.RV("6")))
		synctest.Wait()
		checkStore(t, st, "ns/a@6 ns/b@4")
		if !r.HasSynced() {
			t.Error("not synced after the end bookmark")
		}
		stop()
		checkCalls(t, lw, []string{`watch rv="" send-initial-events match=NotOlderThan bookmarks`})
		if got := st.calls(); got[0] != "replace 2@5" {
			t.Errorf("first store call %q, want one Replace", got[0])
		}
	})
}

// TestRunStreamingFallback: a server that rejects streaming lists gets a
// paginated list instead, as in client-go.
func TestRunStreamingFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw, st := newScriptedLW(t), newMemStore[*corev1.Pod]()
		lw.watch(nil, errorFor("400", 0))
		lw.list(podList("7", "", "a"), nil)
		lw.watch(newFakeWatch(), nil)
		r := newTestReflector(t, lw, st, Config[*corev1.Pod]{})
		stop := runReflector(t, r)
		checkStore(t, st, "ns/a@7")
		stop()
		checkCalls(t, lw, []string{
			`watch rv="" send-initial-events match=NotOlderThan bookmarks`,
			`list rv="0" limit=500`,
			`watch rv="7" bookmarks`,
		})
	})
}

// TestRunForbiddenIsVisible: a 403 shows in Status and is retried slowly.
func TestRunForbiddenIsVisible(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw, st := newScriptedLW(t), newMemStore[*corev1.Pod]()
		for range 3 {
			lw.list(nil, errorFor("403", 0))
		}
		lw.list(podList("1", ""), nil)
		lw.watch(newFakeWatch(), nil)
		r := newTestReflector(t, lw, st, Config[*corev1.Pod]{WatchList: WatchListOff})
		stop := runReflector(t, r)
		s := r.Status()
		if s.Phase != PhaseBackoff || s.Reason != ReasonForbidden || s.Synced || s.LastError == nil {
			t.Errorf("status after 403 = %+v", s)
		}
		start := time.Now()
		for !r.HasSynced() {
			time.Sleep(time.Second)
			synctest.Wait()
		}
		if d := time.Since(start); d < 90*time.Second {
			t.Errorf("three 403s retried within %v, want >= 90s (slow backoff)", d)
		}
		if s := r.Status(); s.Reason != ReasonNone || s.LastError != nil {
			t.Errorf("status after success = %+v", s)
		}
		stop()
	})
}

// TestRunReplaceFailed: a refused Replace does not start the watch; the
// list is retried after a backoff.
func TestRunReplaceFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw, st := newScriptedLW(t), newMemStore[*corev1.Pod]()
		st.failNext = true
		lw.list(podList("5", "", "a"), nil)
		lw.list(podList("6", "", "a"), nil)
		lw.watch(newFakeWatch(), nil)
		r := newTestReflector(t, lw, st, Config[*corev1.Pod]{WatchList: WatchListOff})
		stop := runReflector(t, r)
		if r.HasSynced() || r.Status().Reason != ReasonStore {
			t.Errorf("status = %+v", r.Status())
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		checkStore(t, st, "ns/a@6")
		stop()
		checkCalls(t, lw, []string{`list rv="0" limit=500`, `list rv="0" limit=500`, `watch rv="6" bookmarks`})
	})
}

// TestRunWatchdog: a silent watch is replaced after the idle window.
func TestRunWatchdog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw, st := newScriptedLW(t), newMemStore[*corev1.Pod]()
		w1, w2 := newFakeWatch(), newFakeWatch()
		lw.list(podList("5", ""), nil)
		lw.watch(w1, nil)
		lw.watch(w2, nil)
		r := newTestReflector(t, lw, st, Config[*corev1.Pod]{WatchList: WatchListOff, IdleTimeout: 30 * time.Second})
		stop := runReflector(t, r)
		time.Sleep(20 * time.Second)
		w1.Action(watch.Bookmark, bookmark("6", false))
		time.Sleep(20 * time.Second) // 40s after the open but 20s after the bookmark
		synctest.Wait()
		if w1.IsStopped() {
			t.Fatal("watch closed although a bookmark arrived within the window")
		}
		time.Sleep(11 * time.Second)
		synctest.Wait()
		if !w1.IsStopped() {
			t.Fatal("idle watch not closed")
		}
		stop()
		checkCalls(t, lw, []string{`list rv="0" limit=500`, `watch rv="5" bookmarks`, `watch rv="6" bookmarks`})
	})
}

// TestRunAbandonsHungWatch: a watch request that never answers is
// abandoned by the watchdog (its context is cancelled) and replaced.
func TestRunAbandonsHungWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw, st := newScriptedLW(t), newMemStore[*corev1.Pod]()
		lw.list(podList("5", ""), nil)
		abandoned := lw.hanging()
		w := newFakeWatch()
		lw.watch(w, nil)
		r := newTestReflector(t, lw, st, Config[*corev1.Pod]{WatchList: WatchListOff, IdleTimeout: time.Minute})
		stop := runReflector(t, r)
		time.Sleep(time.Minute)
		synctest.Wait()
		select {
		case <-abandoned:
		default:
			t.Fatal("the hung watch request was not cancelled")
		}
		w.Add(objects.Pod("ns", "a", objects.RV("6")))
		synctest.Wait()
		checkStore(t, st, "ns/a@6")
		stop()
		checkCalls(t, lw, []string{`list rv="0" limit=500`, `watch rv="5" bookmarks`, `watch rv="5" bookmarks`})
	})
}

// TestRunCancelsAbandonedList: a list request the machine abandons (a
// relist asked for while the first list hangs) has its context cancelled
// when the next list starts; the next one's answer is what the store gets.
func TestRunCancelsAbandonedList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw, st := newScriptedLW(t), newMemStore[*corev1.Pod]()
		abandoned := lw.hanging()
		lw.list(podList("5", "", "a"), nil)
		w := newFakeWatch()
		lw.watch(w, nil)
		r := newTestReflector(t, lw, st, Config[*corev1.Pod]{WatchList: WatchListOff})
		stop := runReflector(t, r)
		r.Relist()
		synctest.Wait()
		select {
		case <-abandoned:
		default:
			t.Fatal("the abandoned list request was not cancelled")
		}
		checkStore(t, st, "ns/a@5")
		stop()
		checkCalls(t, lw, []string{`list rv="0" limit=500`, `list rv="0" limit=500`, `watch rv="5" bookmarks`})
	})
}

// TestRunTwice: a Reflector runs once.
func TestRunTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := newScriptedLW(t)
		lw.list(podList("1", ""), nil)
		lw.watch(newFakeWatch(), nil)
		r := newTestReflector(t, lw, newMemStore[*corev1.Pod](), Config[*corev1.Pod]{WatchList: WatchListOff})
		stop := runReflector(t, r)
		if err := r.Run(t.Context()); err != errRan {
			t.Errorf("second Run = %v, want %v", err, errRan)
		}
		stop()
	})
}

func TestNewValidates(t *testing.T) {
	lw, st := newScriptedLW(t), newMemStore[*corev1.Pod]()
	cases := map[string]Options[*corev1.Pod]{
		"no source":     {Store: st},
		"no store":      {Source: lw},
		"bad timeouts":  {Source: lw, Store: st, Config: Config[*corev1.Pod]{MinWatchTimeout: time.Hour, MaxWatchTimeout: time.Minute}},
		"bad mode":      {Source: lw, Store: st, Config: Config[*corev1.Pod]{WatchList: 7}},
		"negative idle": {Source: lw, Store: st, Config: Config[*corev1.Pod]{IdleTimeout: -1}},
		"bad factor":    {Source: lw, Store: st, Config: Config[*corev1.Pod]{Backoff: Backoff{Factor: 0.5}}},
	}
	for name, opts := range cases {
		if _, err := New(opts); err == nil {
			t.Errorf("%s: New accepted %+v", name, opts)
		}
	}
}

// TestListDecodeErrors: list responses that are not lists are decode errors.
func TestListDecodeErrors(t *testing.T) {
	for _, obj := range []metav1.Object{nil, objects.Pod("ns", "a", objects.RV("1"))} {
		var in Input
		if obj == nil {
			in = toPage(nil, nil)
		} else {
			in = toPage(objects.Pod("ns", "a", objects.RV("1")), nil)
		}
		f, ok := in.(ListFailed)
		if !ok || Classify(f.Err) != ReasonDecode {
			t.Errorf("toPage(%v) = %#v, want a decode error", obj, in)
		}
	}
}

// TestStreamFallbackIsNotHandedToTheHook: when the source cannot serve a
// streaming list, the fallback is logged quietly and the error hook's first
// error is the paginated list's own failure, as in client-go.
func TestStreamFallbackIsNotHandedToTheHook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw, st := newScriptedLW(t), newMemStore[*corev1.Pod]()
		lw.watch(nil, errors.New(`strconv.Atoi: parsing "": invalid syntax`))
		lw.list(nil, errors.New("Access Denied"))
		var mu sync.Mutex
		var got []string
		r, err := New(Options[*corev1.Pod]{
			Config: Config[*corev1.Pod]{WatchList: WatchListAuto, Rand: rand.New(rand.NewPCG(1, 1))},
			Source: lw, Store: st,
			OnError: func(_ context.Context, reason Reason, err error) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, fmt.Sprintf("%s: %v", reason, err))
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		stop := runReflector(t, r)
		synctest.Wait()
		stop()
		mu.Lock()
		defer mu.Unlock()
		if want := []string{"Other: Access Denied"}; !slices.Equal(got, want) {
			t.Errorf("error hook got %q, want %q", got, want)
		}
		if s := r.Status(); s.Reason != ReasonOther || s.LastError == nil || s.LastError.Error() != "Access Denied" {
			t.Errorf("status after the failed list: %+v", s)
		}
	})
}

// endlessWatch delivers MODIFIED events for ever, as fast as they are
// taken, until it is stopped.
type endlessWatch struct {
	ch   chan watch.Event
	done chan struct{}
	once sync.Once
	// flowing is closed once n events have been taken.
	flowing chan struct{}
}

func newEndlessWatch(n int) *endlessWatch {
	w := &endlessWatch{ch: make(chan watch.Event), done: make(chan struct{}), flowing: make(chan struct{})}
	go func() {
		for i := 1; ; i++ {
			select {
			case w.ch <- watch.Event{Type: watch.Modified, Object: objects.Pod("ns", "a", objects.RV(strconv.Itoa(10+i)))}:
			case <-w.done:
				return
			}
			if i == n {
				close(w.flowing)
			}
		}
	}()
	return w
}

func (w *endlessWatch) Stop()                          { w.once.Do(func() { close(w.done) }) }
func (w *endlessWatch) ResultChan() <-chan watch.Event { return w.ch }

// While a watch keeps delivering, the shell steps the machine with events
// in bursts (see burst), and a relist request and the end of Run are still
// taken. A liveness check: whether a burst ends at burstMax or when the
// watch is empty for a moment depends on scheduling.
func TestRunBurstsLeaveRoomForOtherInputs(t *testing.T) {
	lw, st := newScriptedLW(t), newMemStore[*corev1.Pod]()
	endless := newEndlessWatch(10 * burstMax)
	defer endless.Stop()
	relisted := make(chan struct{})
	lw.list(podList("10", "", "a"), nil)
	lw.watch(endless, nil)
	lw.script(func(context.Context, metav1.ListOptions) (apiruntime.Object, watch.Interface, error) {
		close(relisted)
		return podList("20", "", "a"), nil, nil
	})
	w2 := newFakeWatch()
	lw.watch(w2, nil)
	r := newTestReflector(t, lw, st, Config[*corev1.Pod]{WatchList: WatchListOff})
	ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logr.Discard()))
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	select {
	case <-endless.flowing:
	case <-time.After(time.Minute):
		t.Fatal("the watch events were not taken")
	}
	r.Relist()
	select {
	case <-relisted:
	case <-time.After(time.Minute):
		t.Fatal("no relist while the watch kept delivering")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not return")
	}
}

// TestRunHandsAnUnpagedListOverInPages: a list that comes in one response
// although it is longer than the page size (a source that ignores the
// limit) goes to a PagedStore in pages of PageSize, and to either store
// as objects of their own, never as pointers into the response's array
// (which one kept object would pin whole); the response is left as it
// was.
func TestRunHandsAnUnpagedListOverInPages(t *testing.T) {
	for _, paged := range []bool{true, false} {
		t.Run(fmt.Sprintf("paged store %v", paged), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lw := newScriptedLW(t)
				list := podList("10", "", "a", "b", "c", "d", "e")
				before := list.DeepCopy()
				lw.list(list, nil)
				lw.watch(newFakeWatch(), nil)
				var st Store[*corev1.Pod]
				mem := newMemStore[*corev1.Pod]()
				st = mem
				want := []string{"replace 5@10"}
				if paged {
					ps := newPagedMemStore[*corev1.Pod]()
					st, mem = ps, ps.memStore
					want = []string{"page 2 first", "page 2", "page 1", "end 10"}
				}
				r := newTestReflector(t, lw, st, Config[*corev1.Pod]{PageSize: 2, WatchList: WatchListOff})
				stop := runReflector(t, r)
				defer stop()
				if got := mem.calls(); !slices.Equal(got, want) {
					t.Errorf("store calls %v, want %v", got, want)
				}
				checkStore(t, mem, "ns/a@10 ns/b@10 ns/c@10 ns/d@10 ns/e@10")
				mem.mu.Lock()
				defer mem.mu.Unlock()
				for i := range list.Items {
					got := mem.objs["ns/"+list.Items[i].Name]
					if got == &list.Items[i] {
						t.Errorf("%s: the store keeps a pointer into the response", list.Items[i].Name)
					}
				}
				if !apiequality.Semantic.DeepEqual(list, before) {
					t.Error("the response was changed")
				}
			})
		})
	}
}
