package reflector

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

var errShortWatch = errors.New("watch closed within 1s without any event")

// startWatch opens a watch from the last synced resource version.
func (m *Machine[T]) startWatch() {
	m.phase = PhaseWatching
	rv := m.lastSyncRV
	m.watch = watchState{rv: rv, start: m.now, lastActivity: m.now, propagate: rv != "" && rv != "0"}
	m.cfg.Metrics.Watch()
	m.emit(Watch{Options: metav1.ListOptions{
		ResourceVersion:     rv,
		AllowWatchBookmarks: true,
		TimeoutSeconds:      m.watchTimeout(),
	}})
}

// watchTimeout draws timeoutSeconds in [MinWatchTimeout, MaxWatchTimeout).
func (m *Machine[T]) watchTimeout() *int64 {
	lo, hi := m.cfg.MinWatchTimeout.Seconds(), m.cfg.MaxWatchTimeout.Seconds()
	s := int64(lo + m.cfg.Rand.Float64()*(hi-lo))
	return &s
}

func (m *Machine[T]) watching() bool {
	return m.phase == PhaseWatching || m.phase == PhaseStreaming
}

func (m *Machine[T]) onWatchOpened() {
	if !m.watching() || m.watch.open {
		return
	}
	m.watch.open = true
	m.watch.lastActivity = m.now
	m.healthy()
}

func (m *Machine[T]) onWatchFailed(err error) {
	if !m.watching() || m.watch.open {
		return
	}
	m.watchError(Classify(err), err)
}

// watchError decides after a watch or streaming list failed to open or
// delivered an ERROR event; the watch is already closed.
func (m *Machine[T]) watchError(reason Reason, err error) {
	m.watch.open = false
	if m.phase == PhaseStreaming {
		m.streamError(reason, err)
		return
	}
	switch {
	case reason == ReasonExpired && m.lastFail != ReasonExpired:
		// The server answered, so whatever failed before (say, connection
		// refused during a partition) is over: relist after the first
		// backoff step, not after a delay grown by those failures. Repeated
		// 410s still grow it, so a 410 loop cannot become a hot loop.
		m.failures = 0
		m.backoff.reset()
		m.fail(reason, err, resumeCycle)
	case reason == ReasonExpired, reason == ReasonNotFound, !m.resumable():
		m.fail(reason, err, resumeCycle)
	default:
		m.fail(reason, err, resumeWatch)
	}
}

// resumable reports whether a new watch can resume where the last one
// stopped. A watch from "" or "0" replays the current objects as ADDED
// events and so never reports deletions made while it was down: until an
// event or bookmark gives a real resource version, only a relist can.
func (m *Machine[T]) resumable() bool {
	return m.lastSyncRV != "" && m.lastSyncRV != "0"
}

// rewatch re-opens the watch at once, or relists if it cannot be resumed.
func (m *Machine[T]) rewatch() {
	if m.resumable() {
		m.startWatch()
		return
	}
	m.cfg.Metrics.Relist(ReasonNoResume)
	m.startCycle()
}

func (m *Machine[T]) onWatchEvent(ev watch.Event) {
	if !m.watching() || !m.watch.open {
		return
	}
	m.watch.lastActivity = m.now
	m.watch.events++
	m.cfg.Metrics.Event(ev.Type)
	switch {
	case ev.Type == watch.Error:
		m.emit(StopWatch{})
		err := statusError(ev.Object)
		m.watchError(Classify(err), err)
	case m.phase == PhaseStreaming:
		m.streamEvent(ev)
	default:
		m.watchEvent(ev)
	}
}

// statusError decodes an ERROR event's object; anything but a Status is a
// decode error.
func statusError(o runtime.Object) error {
	if o == nil {
		return decodeError{errors.New("ERROR event without an object")}
	}
	err := apierrors.FromObject(o)
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		return decodeError{fmt.Errorf("ERROR event carries a %T, not a Status", o)}
	}
	return err
}

func (m *Machine[T]) watchEvent(ev watch.Event) {
	switch ev.Type {
	case watch.Bookmark:
		rv, ok := m.bookmarkRV(ev.Object)
		if !ok {
			return
		}
		m.watch.propagate = true
		m.advance(rv)
		m.emit(Progress{ResourceVersion: rv})
	case watch.Added, watch.Modified, watch.Deleted:
		obj, ok := m.typed(ev.Object)
		if !ok {
			return
		}
		if ev.Type != watch.Added {
			m.watch.propagate = true
		}
		m.emitApply(Apply[T]{Type: ev.Type, Object: obj})
		if m.watch.propagate {
			m.advance(obj.GetResourceVersion())
		}
	default:
		m.report(ReasonDecode, fmt.Errorf("unknown watch event type %q", ev.Type))
	}
}

// bookmarkRV reads a bookmark's resource version; a bookmark may be of any
// type as long as it has object metadata.
func (m *Machine[T]) bookmarkRV(o runtime.Object) (string, bool) {
	if o == nil {
		m.report(ReasonDecode, errors.New("bookmark without an object"))
		return "", false
	}
	acc, err := meta.Accessor(o)
	if err != nil {
		m.report(ReasonDecode, fmt.Errorf("bookmark: %w", err))
		return "", false
	}
	return acc.GetResourceVersion(), true
}

func (m *Machine[T]) advance(rv string) {
	if rv == "" {
		return
	}
	m.lastSyncRV = rv
	m.cfg.Metrics.ResourceVersion(rv)
}

// onWatchClosed re-opens at once after a normal close (e.g. the server's
// timeout), or after a backoff when the watch died young and empty.
func (m *Machine[T]) onWatchClosed() {
	if !m.watching() || !m.watch.open {
		return
	}
	m.watch.open = false
	short := m.now.Sub(m.watch.start) < shortWatch && m.watch.events == 0
	switch {
	case short && m.phase == PhaseStreaming:
		m.fail(ReasonShortWatch, errShortWatch, resumeStream)
	case short:
		m.fail(ReasonShortWatch, errShortWatch, resumeWatch)
	case m.phase == PhaseStreaming:
		m.startStream()
	default:
		m.rewatch()
	}
}

// onIdle is the watchdog: nothing arrived for IdleTimeout.
func (m *Machine[T]) onIdle() {
	m.report(ReasonWatchIdle, fmt.Errorf("no event or bookmark for %v", m.cfg.IdleTimeout))
	m.emit(StopWatch{})
	m.watch.open = false
	if m.phase == PhaseStreaming {
		m.startStream()
		return
	}
	m.rewatch()
}
