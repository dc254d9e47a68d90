package fake

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// watcher is one open watch. The server offers it events under Server.mu;
// its own goroutine (run) delivers them to the client over out.
type watcher struct {
	srv  *Server
	pred predicate
	// bookmarks is set when the client allowed bookmarks.
	bookmarks bool
	// out is the client's result channel; unbuffered, closed by run on exit.
	out chan watch.Event
	// done is closed (once, by end) when the watch must finish.
	done    chan struct{}
	endOnce sync.Once
	// ctx is the caller's context; its cancellation ends the watch.
	ctx context.Context
	// timeout (0: none), closeAt (zero: never), closeAfter (0: never), delay
	// and bufferSize are fixed at open time.
	timeout    time.Duration
	closeAt    time.Time
	closeAfter int
	delay      time.Duration
	bufferSize int

	// wake has capacity 1; a token means "look at the queues again".
	wake chan struct{}
	// startRV is the RV the watch starts after: live events at or below it
	// are not delivered. Immutable.
	startRV uint64

	// mu guards the fields below. Lock order: Server.mu, then mu.
	mu sync.Mutex
	// initial are the opening events (state, replayed history, the
	// initial-events-end bookmark); delivered before pending and never
	// counted against bufferSize.
	initial []queued
	// pending are queued live events and at most one bookmark (queued only
	// when pending was empty); len <= bufferSize+1.
	pending []queued
	// stalled pauses delivery of events and bookmarks.
	stalled bool
	// lastRV is the highest RV offered to or queued for this watch (its
	// start RV before any event); bookmarks never go below it.
	lastRV uint64
	// delivered counts non-bookmark events handed to the client.
	delivered int
	// reason says why the watch ended; set once by end.
	reason string
}

// queued is an event or bookmark waiting for delivery. Its object is copied
// only when delivered, so a write costs no copy per watch.
type queued struct {
	// typ is the event type.
	typ watch.EventType
	// obj is a shared, immutable stored object; nil for a bookmark.
	obj runtime.Object
	// rv, when non-zero, is the delivered object's resource version: the
	// bookmark's RV, or the RV of a DELETED for an object that left the
	// selector.
	rv uint64
	// initialEnd marks the initial-events-end bookmark.
	initialEnd bool
	// at is when it was queued; with a delay it is due at at+delay.
	at time.Time
}

// materialize builds the client's private copy of q.
func (q queued) materialize(r *resourceState) watch.Event {
	if q.typ == watch.Bookmark {
		return watch.Event{Type: watch.Bookmark, Object: r.bookmark(q.rv, q.initialEnd)}
	}
	if q.rv != 0 {
		return watch.Event{Type: q.typ, Object: withRV(q.obj, q.rv)}
	}
	return watch.Event{Type: q.typ, Object: q.obj.DeepCopyObject()}
}

// ResultChan implements watch.Interface.
func (w *watcher) ResultChan() <-chan watch.Event { return w.out }

// Stop implements watch.Interface; it is idempotent. The result channel is
// closed shortly after, once the delivery goroutine notices.
func (w *watcher) Stop() { w.end("stopped by client") }

// end ends the watch and reports whether it was still running.
func (w *watcher) end(reason string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	running := w.reason == ""
	w.endLocked(reason)
	return running
}

// endLocked ends the watch; the first reason wins. Called with mu held.
func (w *watcher) endLocked(reason string) {
	if w.reason == "" {
		w.reason = reason
	}
	w.endOnce.Do(func() { close(w.done) })
}

func (w *watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// offerLocked queues ev if this watch sees it. Called with Server.mu held.
// A watch whose queue is full is closed: the server never blocks on a client.
func (w *watcher) offerLocked(ev event) {
	if ev.res != w.pred.res || ev.rv <= w.startRV {
		return
	}
	out, ok := w.pred.project(ev)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reason != "" {
		return // ended; run is unregistering it
	}
	if len(w.pending) >= w.bufferSize {
		w.srv.stats.slowWatchesClosed.Add(1)
		w.endLocked("client too slow: watch buffer full")
		return
	}
	out.at = w.srv.clock.Now()
	w.pending = append(w.pending, out)
	w.lastRV = ev.rv
	w.signal()
}

// queueBookmark queues a bookmark at the server's current RV, unless the
// watch started in the future. Holding Server.mu makes every event up to
// that RV already queued.
func (w *watcher) queueBookmark() {
	s := w.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if s.rv < w.lastRV || w.stalled || len(w.pending) > 0 {
		return // future start, paused, or not idle: no bookmark
	}
	w.pending = append(w.pending, queued{typ: watch.Bookmark, rv: s.rv, at: s.clock.Now()})
	w.signal()
}

// next returns the next deliverable event. When none is deliverable it
// returns how long until the head of the queue is due (0: wait for a wake).
func (w *watcher) next(now time.Time) (watch.Event, time.Duration, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stalled || w.reason != "" { // paused, or ended: deliver nothing more
		return watch.Event{}, 0, false
	}
	if len(w.initial) > 0 {
		head := w.initial[0]
		w.initial[0] = queued{}
		w.initial = w.initial[1:]
		return head.materialize(w.pred.res), 0, true
	}
	if len(w.pending) == 0 {
		return watch.Event{}, 0, false
	}
	head := w.pending[0]
	if due := head.at.Add(w.delay); now.Before(due) {
		return watch.Event{}, due.Sub(now), false
	}
	w.pending[0] = queued{}
	w.pending = w.pending[1:]
	return head.materialize(w.pred.res), 0, true
}

// run delivers events until the watch ends, then unregisters it and closes
// the result channel.
func (w *watcher) run() {
	defer func() {
		s := w.srv
		s.mu.Lock()
		delete(s.watchers, w)
		s.mu.Unlock()
		close(w.out)
		w.mu.Lock()
		reason := w.reason
		w.mu.Unlock()
		klog.FromContext(w.ctx).V(4).Info("fake: watch ended", "resource", w.pred.res.cfg.GVR, "reason", reason)
	}()
	clk := w.srv.clock
	deadlineC, stopDeadline := timerChan(clk, w.untilDeadline(clk.Now()))
	defer stopDeadline()
	bookmarks := w.newBookmarkSchedule(clk.Now())
	defer bookmarks.stop()
	for {
		ev, wait, ok := w.next(clk.Now())
		if !ok {
			if !w.idle(wait, bookmarks, deadlineC) {
				return
			}
			continue
		}
		select {
		case w.out <- ev:
			if w.countDelivered(ev) {
				w.end("CloseAfterEvents reached")
				return
			}
		case <-w.done:
			return
		case <-w.ctx.Done():
			w.end("context done")
			return
		case <-deadlineC:
			w.end("timeoutSeconds or CloseAt reached")
			return
		}
	}
}

// untilDeadline is how long until the server-side timeout or the scheduled
// close, whichever is first; 0 means never.
func (w *watcher) untilDeadline(now time.Time) time.Duration {
	d := w.timeout
	if !w.closeAt.IsZero() {
		at := max(w.closeAt.Sub(now), time.Nanosecond)
		if d == 0 || at < d {
			d = at
		}
	}
	return d
}

// idle waits for something to do: a wake, the head of the queue falling due
// after wait, a bookmark tick. It reports false when the watch must end.
func (w *watcher) idle(wait time.Duration, bookmarks *bookmarkSchedule, deadlineC <-chan time.Time) bool {
	delayC, stopDelay := timerChan(w.srv.clock, wait)
	defer stopDelay()
	select {
	case <-w.wake:
	case <-delayC:
	case <-bookmarks.c():
		w.queueBookmark()
		bookmarks.next(w.srv.clock.Now())
	case <-w.done:
		return false
	case <-w.ctx.Done():
		w.end("context done")
		return false
	case <-deadlineC:
		w.end("timeoutSeconds or CloseAt reached")
		return false
	}
	return true
}

// countDelivered records a delivered event and reports whether the watch
// has reached its CloseAfterEvents fault.
func (w *watcher) countDelivered(ev watch.Event) bool {
	if ev.Type == watch.Bookmark {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.delivered++
	return w.closeAfter > 0 && w.delivered >= w.closeAfter
}

// setStalled pauses or resumes delivery.
func (w *watcher) setStalled(stalled bool) {
	w.mu.Lock()
	w.stalled = stalled
	w.mu.Unlock()
	w.signal()
}

// timerChan returns a channel that fires after d (nil for d <= 0) and a
// function that releases the timer.
func timerChan(clk clock.Clock, d time.Duration) (<-chan time.Time, func()) {
	if d <= 0 {
		return nil, func() {}
	}
	t := clk.NewTimer(d)
	return t.C(), func() { t.Stop() }
}

// errWatcher is a watch that delivers one ERROR event and closes, which is
// how kube-apiserver reports errors found after a watch was accepted (an
// expired or too large resource version).
type errWatcher struct{ ch chan watch.Event }

func newErrWatcher(ev watch.Event) *errWatcher {
	ch := make(chan watch.Event, 1)
	ch <- ev
	close(ch)
	return &errWatcher{ch: ch}
}

func (e *errWatcher) ResultChan() <-chan watch.Event { return e.ch }
func (e *errWatcher) Stop()                          {}
