package shard

import (
	"net/http"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// filteredWatch passes on the events of an inner watch whose objects the
// matcher owns (bookmarks and errors always), until it is stopped, the
// inner watch ends, or it is expired: then it sends a 410 Gone error event
// and ends.
type filteredWatch struct {
	// inner is the server's watch; stopped when run ends.
	inner watch.Interface
	// matcher decides which objects pass; never nil.
	matcher *Matcher
	// onDone, if set, is called when run ends.
	onDone func(*filteredWatch)
	// dropped, if set, counts the events the filter drops.
	dropped *atomic.Int64
	// out is the filtered stream; closed when run ends.
	out chan watch.Event
	// stop is closed by Stop; stopOnce guards it.
	stop     chan struct{}
	stopOnce sync.Once
	// expired is closed by expire; expireOnce guards it.
	expired    chan struct{}
	expireOnce sync.Once
	// done is closed when run has ended.
	done chan struct{}
}

// newFilteredWatch starts filtering inner through m; onDone (optional) is
// called as the watch ends; dropped (optional) counts dropped events.
func newFilteredWatch(inner watch.Interface, m *Matcher, onDone func(*filteredWatch), dropped *atomic.Int64) *filteredWatch {
	w := &filteredWatch{inner: inner, matcher: m, onDone: onDone, dropped: dropped, out: make(chan watch.Event),
		stop: make(chan struct{}), expired: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// ResultChan implements watch.Interface.
func (w *filteredWatch) ResultChan() <-chan watch.Event { return w.out }

// Stop implements watch.Interface.
func (w *filteredWatch) Stop() { w.stopOnce.Do(func() { close(w.stop) }) }

// expire ends the watch with 410 Gone.
func (w *filteredWatch) expire() { w.expireOnce.Do(func() { close(w.expired) }) }

// gone is the error event expire sends.
var gone = watch.Event{Type: watch.Error, Object: &metav1.Status{
	Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired,
	Message: "the shard assignment changed",
}}

func (w *filteredWatch) run() {
	defer close(w.done)
	defer close(w.out)
	defer w.inner.Stop()
	if w.onDone != nil {
		defer w.onDone(w)
	}
	in := w.inner.ResultChan()
	for {
		var ev watch.Event
		select {
		case <-w.stop:
			return
		case <-w.expired:
			w.send(gone)
			return
		case e, ok := <-in:
			if !ok {
				return
			}
			ev = e
		}
		if !w.keep(ev) {
			if w.dropped != nil {
				w.dropped.Add(1)
			}
			continue
		}
		select {
		case w.out <- ev:
		case <-w.stop:
			return
		case <-w.expired:
			w.send(gone)
			return
		}
	}
}

// send delivers ev unless the watch is stopped first.
func (w *filteredWatch) send(ev watch.Event) {
	select {
	case w.out <- ev:
	case <-w.stop:
	}
}

// keep reports whether ev passes the filter.
func (w *filteredWatch) keep(ev watch.Event) bool {
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted:
		o, err := meta.Accessor(ev.Object)
		if err != nil {
			return true // the reflector reports objects without metadata
		}
		return w.matcher.Owns(o)
	default:
		return true
	}
}
