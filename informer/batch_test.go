package informer

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/internal/testing/objects"
)

// countingClock is the real clock's time in a synctest bubble, counting
// reads.
type countingClock struct {
	mu    sync.Mutex
	reads int
}

func (c *countingClock) Now() time.Time {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return time.Now()
}

func (c *countingClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (c *countingClock) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// A batch reaches the handler in order, with one clock read to stamp it and
// one at each end of the drain, however many notifications it holds;
// resyncs are dropped for a listener that is not due.
func TestListenerAddBatch(t *testing.T) {
	for _, mode := range []DeliveryMode{Coalesce, InOrder} {
		synctest.Test(t, func(t *testing.T) {
			clk := &countingClock{}
			r := &recorder{gate: make(chan struct{})}
			l := newListener[*obj](r, listenerOptions{Mode: mode, Clock: clk})
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() { defer close(done); l.run(ctx) }()
			defer func() { cancel(); <-done }()

			batch := []notification[*obj]{*add(a1), *add(b1), *syn(c1), *upd(a1, a2), *del(b1, false)}
			st := stamp{clock: clk}
			l.addBatch(batch, false, &st)
			if got := clk.count(); got != 1 {
				t.Fatalf("mode %d: %d clock reads to queue a batch, want 1", mode, got)
			}
			synctest.Wait() // the listener is inside the first call
			want := []string{"add a@1 initial=false", "add b@1 initial=false", "update a@1 -> a@2", "delete b@1 unknown=false"}
			if mode == Coalesce {
				want = []string{"add a@2 initial=false"} // b was born and gone
			}
			wantPending := len(want) - 1
			if mode == Coalesce {
				wantPending = 1 // b's entry, which makes no call
			}
			if got := l.stats().Pending; got != wantPending { // Stats reads the clock too
				t.Errorf("mode %d: pending = %d, want %d", mode, got, wantPending)
			}
			close(r.gate)
			synctest.Wait()
			if got := r.take(); !slices.Equal(got, want) {
				t.Fatalf("mode %d:\ngot  %q\nwant %q", mode, got, want)
			}
			if got := clk.count(); got != 4 {
				t.Errorf("mode %d: %d clock reads in all, want 4 (stamp, drain start and end, Stats)", mode, got)
			}
		})
	}
}

// slowRecorder spends d in every call.
type slowRecorder struct {
	recorder
	d time.Duration
}

func (s *slowRecorder) OnAdd(o *obj, initial bool) { time.Sleep(s.d); s.recorder.OnAdd(o, initial) }

// Handler time is accounted when the listener runs out of work and every
// segment entries; Busy runs from the start of the drain (or segment).
func TestListenerHandlerTimePerDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &slowRecorder{d: time.Second}
		l := startListener(t, h, InOrder)
		n := segment + 6
		batch := make([]notification[*obj], n)
		for i := range batch {
			batch[i] = *add(&obj{string(rune('a' + i)), 1})
		}
		st := stamp{clock: l.clock}
		l.addBatch(batch, true, &st)
		time.Sleep(2500 * time.Millisecond)
		if s := l.stats(); s.Busy != 2500*time.Millisecond || s.HandlerTime != 0 || s.Pending != n-3 || s.Processed != 2 {
			t.Fatalf("mid-drain stats = %+v", s)
		}
		time.Sleep(time.Duration(segment)*time.Second - 2500*time.Millisecond + 500*time.Millisecond)
		if s := l.stats(); s.HandlerTime != time.Duration(segment)*time.Second || s.Busy != 500*time.Millisecond {
			t.Fatalf("stats after one segment = %+v", s)
		}
		time.Sleep(time.Duration(n-segment)*time.Second - 500*time.Millisecond)
		synctest.Wait()
		if s := l.stats(); s.HandlerTime != time.Duration(n)*time.Second || s.Busy != 0 || s.Pending != 0 || s.Processed != int64(n) {
			t.Fatalf("final stats = %+v", s)
		}
	})
}

// chanLW is a source whose list is empty and whose watch is ch.
type chanLW struct{ ch chan watch.Event }

func (c chanLW) List(metav1.ListOptions) (runtime.Object, error) {
	return &corev1.ConfigMapList{}, nil
}

func (c chanLW) Watch(metav1.ListOptions) (watch.Interface, error) {
	return watch.NewProxyWatcher(c.ch), nil
}

// The pop loop hands the handlers whole batches: order is kept per handler
// (here, a key's events are split across batches), each handler gets the
// same sequence, and resyncs reach only handlers that are due, whether the
// queue coalesces or is ordered.
func TestInformerBatchesKeepOrder(t *testing.T) {
	for _, queue := range []string{"coalescing", "OrderedQueue"} {
		inOrder := queue != "coalescing"
		synctest.Test(t, func(t *testing.T) {
			inf, err := New(Options[*corev1.ConfigMap]{Source: cache.ToListerWatcherWithContext(chanLW{}),
				OrderedQueue: inOrder})
			if err != nil {
				t.Fatal(err)
			}
			var e1, e2 cmEvents
			mode := InOrder
			r1, _ := inf.AddHandler(&e1, HandlerOptions{Delivery: &mode})
			r2, _ := inf.AddHandler(&e2, HandlerOptions{Delivery: &mode})
			// Queue everything first, so that the pop loop sees it at once.
			cm := func(name, rv string) *corev1.ConfigMap {
				c := objects.ConfigMap("ns", name, objects.Data("v", "0"))
				c.ResourceVersion = rv
				return c
			}
			mustNil(t, inf.sink.Replace([]*corev1.ConfigMap{cm("a", "1"), cm("b", "1")}, "1"))
			mustNil(t, inf.sink.Add(cm("c", "2")))
			mustNil(t, inf.sink.Update(cm("a", "3")))
			mustNil(t, inf.sink.Delete(cm("b", "4")))
			mustNil(t, inf.sink.Update(cm("a", "5")))
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			go inf.popLoop(ctx)
			for _, r := range []*Registration[*corev1.ConfigMap]{r1, r2} {
				go r.l.run(ctx)
			}
			synctest.Wait()
			want := []string{"add a@1 initial=true", "add b@1 initial=true", "add c@2 initial=false",
				"update a@1->3", "delete b@4 unknown=false", "update a@3->5"}
			if !inOrder { // the FIFO queued a's and b's changes under their keys
				want = []string{"add a@1 initial=true", "update a@1->3", "update a@3->5",
					"add b@1 initial=true", "delete b@4 unknown=false", "add c@2 initial=false"}
			}
			for i, e := range []*cmEvents{&e1, &e2} {
				if got := e.Take(); !slices.Equal(got, want) {
					t.Fatalf("%s handler %d:\ngot  %q\nwant %q", queue, i, got, want)
				}
			}
			if !r1.HasSynced() || !r2.HasSynced() || !inf.HasSynced() {
				t.Fatal("not synced after the initial list was delivered")
			}
			inf.mu.Lock()
			inf.replayLocked(r1, noteResynced) // a resync of r1 alone, as resyncDue does it
			inf.mu.Unlock()
			synctest.Wait()
			got := e1.Take()
			slices.Sort(got) // in the store's key order
			if want := []string{"update a@5->5", "update c@2->2"}; !slices.Equal(got, want) {
				t.Fatalf("due handler: got %q, want %q", got, want)
			}
			if got := e2.Take(); len(got) != 0 {
				t.Fatalf("handler not due got %q", got)
			}
			cancel()
			inf.fifo.Close()
			for _, r := range []*Registration[*corev1.ConfigMap]{r1, r2} {
				r.l.stop()
			}
			synctest.Wait()
		})
	}
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
