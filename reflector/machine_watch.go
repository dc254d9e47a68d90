package reflector

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/internal/objname"
	"github.com/listwatch/listwatch/internal/resourceversion"
)

// startWatch opens a watch from the last synced resource version.
func (m *Machine[T]) startWatch() {
	m.phase = PhaseWatching
	rv := m.lastSyncRV
	m.watch = watchState{rv: rv, start: m.now, lastActivity: m.now, propagate: rv != "" && rv != "0"}
	if m.watch.propagate {
		m.watch.pos, _ = resourceversion.Parse(rv)
	}
	m.cfg.Metrics.Watch()
	m.emit(Watch{Options: metav1.ListOptions{
		ResourceVersion:     rv,
		AllowWatchBookmarks: true,
		TimeoutSeconds:      m.watchTimeout(),
	}})
}

// watchTimeout draws timeoutSeconds in [MinWatchTimeout, MaxWatchTimeout)
// for the watch being opened and records it in m.watch.
func (m *Machine[T]) watchTimeout() *int64 {
	lo, hi := m.cfg.MinWatchTimeout.Seconds(), m.cfg.MaxWatchTimeout.Seconds()
	s := int64(lo + m.cfg.Rand.Float64()*(hi-lo))
	m.watch.timeout = time.Duration(s) * time.Second
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
	if m.confirm != nil && !m.confirm.asked && m.phase == PhaseWatching {
		m.askConfirm()
	}
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
	case reason == ReasonExpired, reason == ReasonNotFound, !m.resumable():
		m.fail(reason, err, resumeCycle)
	default:
		m.fail(reason, err, resumeWatch)
	}
}

// resumable reports whether a new watch can resume where the last one
// stopped. A watch from "" or "0" replays the current objects as ADDED
// events and so never reports deletions made while it was down: until an
// event or bookmark gives a real resource version, only a relist can. Nor
// can a watch after a list without a resource version, whatever it
// delivered: nothing ties that list to the server's history.
func (m *Machine[T]) resumable() bool {
	return m.lastSyncRV != "" && m.lastSyncRV != "0" && !m.unanchored
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
		err := ErrorFromEvent(ev)
		m.watchError(Classify(err), err)
	case m.phase == PhaseStreaming:
		m.streamEvent(ev)
	default:
		m.watchEvent(ev)
	}
}

func (m *Machine[T]) watchEvent(ev watch.Event) {
	switch ev.Type {
	case watch.Bookmark:
		rv, ok := m.bookmarkRV(ev.Object)
		if !ok {
			return
		}
		if rv == "" || malformedRV(rv) {
			m.report(ReasonInvalidResourceVersion, fmt.Errorf("bookmark with resourceVersion %q ignored", rv))
			return
		}
		m.watch.propagate = true
		prev, back := m.watch.move(rv, false)
		m.advance(rv)
		m.deliver(Progress{ResourceVersion: rv})
		if back {
			m.wentBack("bookmark", rv, prev)
		}
	case watch.Added, watch.Modified, watch.Deleted:
		obj, ok := m.typed(ev.Object)
		if !ok {
			return
		}
		if ev.Type != watch.Added {
			m.watch.propagate = true
		}
		if rv := obj.GetResourceVersion(); m.watch.propagate && malformedRV(rv) {
			// The change cannot be placed in the server's history, and
			// resuming from it would fail for ever: drop it and relist.
			m.emit(StopWatch{})
			m.watch.open = false
			m.rvUnavailable = true
			m.fail(ReasonInvalidResourceVersion, fmt.Errorf(
				"%s event for %s with resourceVersion %q dropped; relisting", ev.Type, objname.Of(obj), rv), resumeCycle)
			return
		}
		if c := m.confirm; c != nil && c.asked {
			c.held = append(c.held, Apply[T]{Type: ev.Type, Object: obj})
		} else {
			m.emitApply(Apply[T]{Type: ev.Type, Object: obj})
		}
		if !m.watch.propagate {
			return
		}
		rv := obj.GetResourceVersion()
		prev, back := m.watch.move(rv, true)
		m.advance(rv)
		if back {
			m.wentBack(fmt.Sprintf("%s event for %s", ev.Type, objname.Of(obj)), rv, prev)
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

// move records rv, the resource version of an event (strict) or bookmark
// that moves the watch's position, and reports whether it went back: an
// event at or before the position, a bookmark before it. A resource
// version that is not a number moves nothing (the callers refuse the
// malformed ones; an empty one is absent).
func (w *watchState) move(rv string, strict bool) (prev uint64, back bool) {
	n, ok := resourceversion.Parse(rv)
	if !ok {
		return 0, false
	}
	prev = w.pos
	w.pos = n
	return prev, prev != 0 && (n < prev || strict && n == prev)
}

// wentBack relists after a watch delivered a resource version behind one
// it delivered before (what, at rv, after prev). A kube-apiserver never
// does: one of the two is bogus (a proxy's corruption, a server restored
// from a backup), and the one applied last cannot be told from the other.
// Both were applied, so the store's resource version is the later, lower
// one, which a barrier can trust, and the relist from a quorum read
// (rvUnavailable) replaces whatever the bogus one brought.
func (m *Machine[T]) wentBack(what, rv string, prev uint64) {
	m.emit(StopWatch{})
	m.watch.open = false
	m.rvUnavailable = true
	m.fail(ReasonInvalidResourceVersion, fmt.Errorf(
		"%s at resourceVersion %s, behind %d earlier in the same watch: resource versions went backwards; relisting from a quorum read",
		what, rv, prev), resumeCycle)
}

// deliver emits an effect of the watch, or holds it while a confirming
// list runs (see confirmState).
func (m *Machine[T]) deliver(e Effect) {
	if c := m.confirm; c != nil && c.asked {
		c.held = append(c.held, e)
		return
	}
	m.emit(e)
}

func (m *Machine[T]) advance(rv string) {
	if rv == "" {
		return
	}
	m.lastSyncRV = rv
	m.cfg.Metrics.ResourceVersion(rv)
}

// onWatchClosed decides after the server closed a watch. A streaming list
// closed before its initial-events-end bookmark has failed. A watch that
// lived (longWatch, or its timeout) is re-opened at once: the server's
// timeout, an apiserver restart, a proxy that ends connections every
// minute; so is one closed sooner while the close bucket has a token (the
// first in a while), or one that delivered busyCloseEvents events while
// the busy-close bucket has a token (kube-apiserver sheds a watcher that
// falls behind). A run of quick closes resumes after a backoff, keeping
// what the watch delivered.
func (m *Machine[T]) onWatchClosed() {
	if !m.watching() || !m.watch.open {
		return
	}
	m.watch.open = false
	lived := m.now.Sub(m.watch.start)
	switch {
	case m.phase == PhaseStreaming:
		m.streamError(ReasonStreamIncomplete, fmt.Errorf(
			"streaming list closed after %v and %d events, before its initial-events-end bookmark",
			lived, m.watch.events))
	case lived >= min(longWatch, m.watch.timeout):
		m.rewatch()
	case m.watch.events >= busyCloseEvents && m.busyCloses.take(m.now) == 0:
		m.notice(ReasonShortWatch, fmt.Errorf("watch closed after %v and %d events, before its timeout (a server shedding a watch the client read too slowly: no backoff)",
			lived, m.watch.events))
		m.rewatch()
	case m.closes.take(m.now) == 0:
		m.notice(ReasonShortWatch, fmt.Errorf("watch closed after %v and %d events, before its timeout (the first quick close in %v: no backoff)",
			lived, m.watch.events, quickCloseEvery))
		m.rewatch()
	default:
		m.fail(ReasonShortWatch, fmt.Errorf("watch closed after %v and %d events, before its timeout, again within %v",
			lived, m.watch.events, quickCloseEvery), resumeWatch)
	}
}

// malformedRV reports whether rv is set but cannot be resumed from:
// kube-apiserver's resource versions are decimal numbers, and it answers a
// watch from any other with a 500. An empty one is absent, not malformed:
// client-go's fake clientset never sets any.
func malformedRV(rv string) bool {
	if rv == "" {
		return false
	}
	_, ok := resourceversion.Parse(rv)
	return !ok
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
