package hostile

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// stream is a watch.Interface fed by one goroutine of the server.
type stream struct {
	ch   chan watch.Event
	done chan struct{}
	once sync.Once
}

func (w *stream) ResultChan() <-chan watch.Event { return w.ch }
func (w *stream) Stop()                          { w.once.Do(func() { close(w.done) }) }

// send delivers ev, or reports false when the client stopped the watch.
func (w *stream) send(ctx context.Context, ev watch.Event) bool {
	select {
	case w.ch <- ev:
		return true
	case <-w.done:
	case <-ctx.Done():
	}
	return false
}

var watchBehaviours = []behaviour{
	failInternal, failThrottle, failExpired, failForbidden, closeAtOnce, bookmarkThenClose, fewThenClose,
	errorEvent410, errorEvent500, badRVBookmark, emptyRVBookmark, badRVEvent, replay, closeSoon,
}

var streamBehaviours = append(slices.Clone(watchBehaviours), cutStream, dropEndBookmark)

// WatchWithContext opens a watch, or a streaming list when
// SendInitialEvents is set.
func (s *server) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	if err := s.stall(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	streaming := o.SendInitialEvents != nil && *o.SendInitialEvents
	var b behaviour
	if streaming {
		b = s.draw("stream", streamBehaviours...)
	} else {
		b = s.draw("watch", watchBehaviours...)
	}
	if err := failure(b); err != nil {
		return nil, err
	}
	if err := s.validRV(o.ResourceVersion); err != nil {
		return nil, err
	}
	w := &watchRun{
		s: s, b: b, streaming: streaming,
		out: &stream{ch: make(chan watch.Event), done: make(chan struct{})},
	}
	// Where the events start: a watch from a resource version gets what
	// came after it; a watch from ""/"0" and a streaming list first get
	// the current objects as ADDED events.
	if from, err := strconv.ParseUint(o.ResourceVersion, 10, 64); err == nil && from > 0 && !streaming {
		w.pos, _ = slices.BinarySearchFunc(s.log, from, func(e entry, rv uint64) int {
			n, _ := strconv.ParseUint(e.obj.ResourceVersion, 10, 64)
			if n <= rv {
				return -1
			}
			return 1
		})
	} else {
		w.initial, w.pos = s.snapshot(), len(s.log)
	}
	if b == replay {
		w.initial, w.pos = nil, 0
	}
	w.rv, w.few = rvString(s.rv), s.rng.IntN(4)
	// A bookmark may claim only what the watch has delivered: the RV it
	// started from while older changes are still to be sent.
	w.bookmarkRV = w.rv
	if w.pos < len(s.log) && len(w.initial) == 0 && o.ResourceVersion != "" {
		w.bookmarkRV = o.ResourceVersion
	}
	if o.TimeoutSeconds != nil {
		w.timeout = time.Duration(*o.TimeoutSeconds) * time.Second
	}
	if b == closeSoon {
		w.timeout = time.Duration(1+s.rng.IntN(99)) * 100 * time.Millisecond
	}
	go w.run(ctx)
	return w.out, nil
}

// snapshot returns the current objects as ADDED events, by name.
func (s *server) snapshot() []watch.Event {
	names := make([]string, 0, len(s.objs))
	for k := range s.objs {
		names = append(names, k)
	}
	slices.Sort(names)
	evs := make([]watch.Event, len(names))
	for i, k := range names {
		evs[i] = watch.Event{Type: watch.Added, Object: s.objs[k].DeepCopy()}
	}
	return evs
}

// watchRun is one open watch.
type watchRun struct {
	s         *server
	b         behaviour
	streaming bool
	out       *stream
	initial   []watch.Event // sent first
	pos       int           // the next log entry to send after them
	rv        string        // the server's resource version when opened
	// bookmarkRV is what bookmarkThenClose may announce: rv, or the RV
	// the watch started from when changes after it are still unsent.
	bookmarkRV string
	timeout    time.Duration // 0: none
	few        int           // how many events fewThenClose and cutStream send
}

func (w *watchRun) run(ctx context.Context) {
	defer close(w.out.ch)
	send := func(ev watch.Event) bool { return w.out.send(ctx, ev) }
	switch w.b {
	case closeAtOnce:
	case bookmarkThenClose:
		send(bookmark(w.bookmarkRV, false))
	case badRVBookmark:
		send(bookmark("bookmark-"+w.rv, false))
	case emptyRVBookmark:
		send(bookmark("", false))
	case errorEvent410:
		send(errorEvent(apierrors.NewResourceExpired("hostile: gone")))
	case errorEvent500:
		send(errorEvent(apierrors.NewInternalError(context.DeadlineExceeded)))
	case badRVEvent:
		cm := newConfigMap("cm-00", "rv-"+w.rv, 99)
		send(watch.Event{Type: watch.Modified, Object: cm})
	case fewThenClose, cutStream:
		evs := append(w.initial, w.logFrom(w.pos)...)
		evs = evs[:min(len(evs), w.few)]
		if w.b == fewThenClose {
			// A wrong-typed object among them, as a misrouted watch would send.
			evs = append(evs, watch.Event{Type: watch.Added, Object: &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", ResourceVersion: w.rv}}})
		}
		for _, ev := range evs {
			if !send(ev) {
				return
			}
		}
	default: // healthy, replay, closeSoon, dropEndBookmark
		w.follow(ctx, send)
	}
}

// follow sends the initial events (and the end bookmark of a streaming
// list, unless the behaviour drops it), then every change as it happens,
// until the client stops or the watch times out.
func (w *watchRun) follow(ctx context.Context, send func(watch.Event) bool) {
	var expire <-chan time.Time
	if w.timeout > 0 {
		expire = time.After(w.timeout)
	}
	for _, ev := range w.initial {
		if !send(ev) {
			return
		}
	}
	if w.streaming && w.b != dropEndBookmark {
		if !send(bookmark(w.rv, true)) {
			return
		}
	}
	for {
		w.s.mu.Lock()
		evs, changed, future := w.s.logFromLocked(w.pos), w.s.changed, w.s.future
		w.s.future = 0 // sent once, by the first watch to see it
		w.s.mu.Unlock()
		for _, ev := range evs {
			if !send(ev) {
				return
			}
			w.pos++
		}
		if future != 0 && !send(bookmark(rvString(future), false)) {
			return
		}
		select {
		case <-changed:
		case <-expire:
			return
		case <-w.out.done:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (w *watchRun) logFrom(pos int) []watch.Event {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.logFromLocked(pos)
}

func (s *server) logFromLocked(pos int) []watch.Event {
	evs := make([]watch.Event, 0, len(s.log)-pos)
	for _, e := range s.log[pos:] {
		evs = append(evs, watch.Event{Type: e.typ, Object: e.obj.DeepCopy()})
	}
	return evs
}

func bookmark(rv string, initialEnd bool) watch.Event {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	if initialEnd {
		cm.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	return watch.Event{Type: watch.Bookmark, Object: cm}
}

func errorEvent(err *apierrors.StatusError) watch.Event {
	st := err.ErrStatus
	return watch.Event{Type: watch.Error, Object: runtime.Object(&st)}
}
