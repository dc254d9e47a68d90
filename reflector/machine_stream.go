package reflector

import (
	"time"

	"fmt"

	"github.com/listwatch/listwatch/internal/resourceversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// startStream opens a streaming list: a watch with sendInitialEvents that
// replays the current objects as ADDED events and ends them with a bookmark
// annotated k8s.io/initial-events-end.
func (m *Machine[T]) startStream() {
	m.pendingRelist = time.Time{} // a new list serves a pending request
	m.confirm = nil
	m.phase = PhaseStreaming
	rv := m.lastSyncRV
	if m.rvUnavailable {
		rv = ""
	}
	pageSize := 0
	if m.pagedReplace {
		pageSize = int(m.cfg.PageSize)
	}
	m.stream = newStreamBuffer[T](pageSize)
	m.watch = watchState{rv: rv, start: m.now, lastActivity: m.now}
	m.cfg.Metrics.Watch()
	m.emit(Watch{Options: metav1.ListOptions{
		ResourceVersion:      rv,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		SendInitialEvents:    ptr.To(true),
		AllowWatchBookmarks:  true,
		TimeoutSeconds:       m.watchTimeout(),
	}})
}

func (m *Machine[T]) streamEvent(ev watch.Event) {
	switch ev.Type {
	case watch.Bookmark:
		rv, ok := m.bookmarkRV(ev.Object)
		switch {
		case !ok || !isInitialEventsEnd(ev):
		case rv == "" || malformedRV(rv):
			m.emit(StopWatch{})
			m.watch.open = false
			m.streamError(ReasonInvalidResourceVersion,
				fmt.Errorf("initial-events-end bookmark with resourceVersion %q", rv))
		default:
			m.finishStream(rv)
		}
	case watch.Added, watch.Modified, watch.Deleted:
		m.collect(ev)
	default:
		m.report(ReasonDecode, fmt.Errorf("unknown watch event type %q", ev.Type))
	}
}

func isInitialEventsEnd(ev watch.Event) bool {
	o, ok := ev.Object.(metav1.Object)
	return ok && o.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}

// collect applies one initial event to the streamed set. With a
// PagedStore, a full page goes to the store at once (ReplacePage), and the
// deletion of an object already handed over is applied to the store.
func (m *Machine[T]) collect(ev watch.Event) {
	obj, ok := m.typed(ev.Object)
	if !ok {
		return
	}
	key, err := m.cfg.KeyFunc(obj)
	if err != nil {
		m.report(ReasonDecode, fmt.Errorf("streamed object dropped: it has no key: %w", err))
		return
	}
	if ev.Type == watch.Deleted {
		if !m.stream.remove(key) && m.stream.pages > 0 {
			m.emit(Apply[T]{Type: watch.Deleted, Object: obj})
		}
		return
	}
	if page := m.stream.put(key, obj); page != nil {
		if m.stream.pages == 1 {
			// A refused page restores these: nothing has changed yet.
			m.undo.rv, m.undo.synced = m.lastSyncRV, m.synced
		}
		m.emit(ReplacePage[T]{Items: page, First: m.stream.pages == 1})
	}
}

// finishStream replaces the store with the streamed set (one Replace, or
// the last page and ReplaceEnd when pages were handed over) and keeps the
// same stream open as the watch.
func (m *Machine[T]) finishStream(rv string) {
	b := m.stream
	m.stream = nil
	items := b.rest()
	if b.pages == 0 {
		m.replace(items, rv, false)
	} else {
		if len(items) > 0 {
			m.emit(ReplacePage[T]{Items: items})
		}
		m.record(rv, ReplaceEnd{ResourceVersion: rv})
	}
	m.phase = PhaseWatching
	m.watch.propagate = true
	m.watch.pos, _ = resourceversion.Parse(rv)
}

// streamError decides after a streaming list failed (the stream is already
// closed): see the decision table in docs/reflector.md. It mirrors
// client-go: 429 and connection errors retry the stream after a backoff,
// Expired retries it at once from RV="", and every other failure, a stream
// that ended before its initial-events-end bookmark included, falls back to
// a paginated list in the same cycle (auto mode). A fallback is reported
// quietly (ReportError.Quiet): it is not a failure of the cycle.
func (m *Machine[T]) streamError(reason Reason, err error) {
	m.stream = nil
	switch {
	case reason == ReasonExpired && m.watch.rv != "":
		m.report(reason, err)
		m.rvUnavailable = true
		m.cfg.Metrics.Relist(reason)
		m.startStream()
	case reason == ReasonTooManyRequests, reason == ReasonConnection, m.cfg.WatchList == WatchListForce:
		m.fail(reason, err, resumeStream)
	default:
		m.notice(reason, err)
		m.startList(m.relistRV())
	}
}

// onStreamDeadline gives up a streaming list whose initial-events-end
// bookmark did not come within StreamDeadline, and streaming lists for
// this source with it: a server or proxy that drops the bookmark would
// hold every later stream just as long.
func (m *Machine[T]) onStreamDeadline() {
	m.emit(StopWatch{})
	m.watch.open = false
	if m.cfg.WatchList != WatchListForce {
		m.streamFallback = ReasonStreamIncomplete
	}
	m.streamError(ReasonStreamIncomplete, fmt.Errorf(
		"no initial-events-end bookmark within %v (%d events received); using paginated lists from now on",
		m.cfg.StreamDeadline, m.watch.events))
}
