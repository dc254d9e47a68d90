package reflector

import (
	"time"

	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// startList asks for the first page of a paginated list at rv.
func (m *Machine[T]) startList(rv string) {
	limit := int64(0)
	if (rv == "" || rv == "0" || m.paginatedResult) && !m.unpagedNext {
		limit = m.cfg.PageSize
	}
	m.unpagedNext = false
	m.startListLimit(rv, limit)
}

func (m *Machine[T]) startListLimit(rv string, limit int64) {
	m.pendingRelist = time.Time{} // a new list serves a pending request
	m.confirm = nil
	m.phase = PhaseListing
	m.list = listState[T]{rv: rv, limit: limit}
	m.cfg.Metrics.List()
	m.emit(List{Options: metav1.ListOptions{ResourceVersion: rv, Limit: limit}})
}

func (m *Machine[T]) onListPage(p ListPage) {
	if m.phase != PhaseListing && !m.confirming() {
		return
	}
	l := &m.list
	l.pages++
	if l.pages == 1 {
		if malformedRV(p.ResourceVersion) {
			// Nothing could be resumed from this list: ask for a quorum
			// read next time.
			m.rvUnavailable = true
			m.list = listState[T]{}
			m.listFail(ReasonInvalidResourceVersion, fmt.Errorf("list with resourceVersion %q refused", p.ResourceVersion))
			return
		}
		l.pageRV = p.ResourceVersion
		if l.rv == "0" && p.Continue != "" {
			m.paginatedResult = true
		}
	}
	if p.Continue != "" && !l.newToken(p.Continue) {
		err := fmt.Errorf("server repeated continue token %q after %d pages; the next list is not paginated", p.Continue, l.pages)
		m.list = listState[T]{}
		m.unpagedNext = true
		m.listFail(ReasonDecode, err)
		return
	}
	if m.pagedReplace && (l.pages > 1 || p.Continue != "" || int64(len(p.Items)) > m.cfg.PageSize && m.cfg.PageSize > 0) {
		m.onPagedListPage(p)
		return
	}
	l.items = m.typedAll(p.Items, l.items)
	l.shared = l.shared || p.Shared
	if p.Continue != "" {
		m.cfg.Metrics.List()
		m.emit(List{Options: metav1.ListOptions{Continue: p.Continue, Limit: l.limit}})
		return
	}
	items, rv, shared := l.items, l.pageRV, l.shared
	m.list = listState[T]{}
	if m.confirming() {
		m.undo.rv, m.undo.synced = m.lastSyncRV, m.synced
		m.emit(Replace[T]{Items: items, Copy: shared})
		m.confirmed()
		return
	}
	m.replace(items, rv, shared)
	m.watchAfterList()
}

// onPagedListPage hands one page of a multi-page list to a PagedStore, in
// pages of PageSize when it is larger (a response that ignored the limit),
// and asks for the next, or ends the list: nothing of the list is kept
// here.
func (m *Machine[T]) onPagedListPage(p ListPage) {
	l := &m.list
	if l.pages == 1 {
		// A refused page restores these: nothing has changed yet.
		m.undo.rv, m.undo.synced = m.lastSyncRV, m.synced
	}
	items, first := m.typedAll(p.Items, nil), l.pages == 1
	for size := int(m.cfg.PageSize); size > 0 && len(items) > size; items, first = items[size:], false {
		m.emit(ReplacePage[T]{Items: items[:size:size], First: first, Copy: p.Shared})
	}
	m.emit(ReplacePage[T]{Items: items, First: first, Copy: p.Shared})
	if p.Continue != "" {
		m.cfg.Metrics.List()
		m.emit(List{Options: metav1.ListOptions{Continue: p.Continue, Limit: l.limit}})
		return
	}
	rv := l.pageRV
	m.list = listState[T]{}
	if m.confirming() {
		m.emit(ReplaceEnd{})
		m.confirmed()
		return
	}
	m.record(rv, ReplaceEnd{ResourceVersion: rv})
	m.watchAfterList()
}

// watchAfterList starts the watch after a completed list; after one
// without a resource version it arranges the confirming list (see
// confirmState).
func (m *Machine[T]) watchAfterList() {
	m.startWatch()
	if m.unanchored {
		m.confirm = &confirmState[T]{}
	}
}

// confirming reports whether a confirming list runs: asked for, with its
// watch still open.
func (m *Machine[T]) confirming() bool {
	return m.confirm != nil && m.confirm.asked && m.phase == PhaseWatching && m.watch.open
}

// askConfirm asks for the confirming list once its watch is open: a quorum
// read, paged as a first list is.
func (m *Machine[T]) askConfirm() {
	m.confirm.asked = true
	limit := int64(0)
	if !m.unpagedNext {
		limit = m.cfg.PageSize
	}
	m.unpagedNext = false
	m.list = listState[T]{limit: limit}
	m.cfg.Metrics.List()
	m.emit(List{Options: metav1.ListOptions{Limit: limit}})
}

// confirmed follows the confirming list's Replace (or ReplaceEnd), which
// carries no resource version (the watch's position stays the one to
// resume from, and the watch is still not resumable), with the watch's
// effects held meanwhile.
func (m *Machine[T]) confirmed() {
	for _, e := range m.confirm.held {
		m.emit(e)
	}
	m.confirm = nil
}

// listFail fails the cycle after a list page was refused; a confirming
// list's watch is stopped with it.
func (m *Machine[T]) listFail(reason Reason, err error) {
	if m.confirming() {
		m.emit(StopWatch{})
		m.watch.open = false
		m.confirm = nil
	}
	m.fail(reason, err, resumeCycle)
}

// onListFailed decides on a failed page: see the decision table in
// docs/reflector.md.
func (m *Machine[T]) onListFailed(err error) {
	if m.confirming() {
		m.listFail(Classify(err), err)
		return
	}
	if m.phase != PhaseListing {
		return
	}
	reason := Classify(err)
	l := m.list
	switch {
	case reason == ReasonExpired && l.rv != "":
		// The resource version (or the continue token built on it) is gone:
		// list again from a quorum read.
		m.report(reason, err)
		m.rvUnavailable = true
		m.cfg.Metrics.Relist(reason)
		m.startList("")
	case reason == ReasonExpired && l.pages > 0 && l.limit > 0:
		// A quorum-read list outlived its continue token: read it whole.
		m.report(reason, err)
		m.cfg.Metrics.Relist(reason)
		m.startListLimit("", 0)
	default:
		m.fail(reason, err, resumeCycle)
	}
}

// replace emits a Replace and records the list's resource version.
func (m *Machine[T]) replace(items []T, rv string, shared bool) {
	m.undo.rv, m.undo.synced = m.lastSyncRV, m.synced
	m.record(rv, Replace[T]{Items: items, ResourceVersion: rv, Copy: shared})
}

// anchor notes whether a completed list carried a resource version. One
// without (a broken server; client-go's fake clientset) is accepted, but
// nothing ties it to the server's history: it is confirmed by a second
// list once the watch after it is open (confirmState), and that watch is
// never resumed: when it ends, the machine lists again. Reported once per
// unanchored list, quietly (notice): fake clientsets do it all the time.
func (m *Machine[T]) anchor(rv string) {
	m.unanchored = rv == ""
	if m.unanchored {
		m.notice(ReasonInvalidResourceVersion, errors.New(
			"list without a resourceVersion: listing again once the watch is open; the watch will not be resumed"))
	}
}

// record emits e, the effect that completes a list at rv (Replace or
// ReplaceEnd), and records the list's resource version. undo must hold
// the state to restore if the store refuses it.
func (m *Machine[T]) record(rv string, e Effect) {
	m.emit(e)
	m.anchor(rv)
	m.synced = true
	m.lastSyncRV = rv
	m.rvUnavailable = false
	m.healthy()
	m.cfg.Metrics.ResourceVersion(rv)
}

// onReplaceFailed undoes the last replace and retries the cycle after a
// backoff. The effects after the Replace were not executed, but a
// streaming list's watch is open, so it is stopped.
func (m *Machine[T]) onReplaceFailed(err error) {
	if err == nil {
		err = errors.New("store refused Replace")
	}
	m.lastSyncRV, m.synced = m.undo.rv, m.undo.synced
	if m.phase == PhaseWatching || m.phase == PhaseStreaming {
		// A refused streamed page stops the stream like a refused Replace
		// stops the watch after it.
		m.emit(StopWatch{})
		m.watch.open = false
		m.stream = nil
	}
	m.fail(ReasonStore, err, resumeCycle)
}
