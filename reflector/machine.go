package reflector

import (
	"time"

	"github.com/listwatch/listwatch/store"
)

// resume names the action a backoff ends with.
type resume int

const (
	resumeCycle  resume = iota // start a new list cycle (streaming or paginated)
	resumeWatch                // re-watch from the last synced resource version
	resumeStream               // retry the streaming list of the current cycle
)

// Machine is the List-then-Watch engine as a pure state machine: it has no
// goroutines, channels or clock. Each Step takes the current time and one
// Input and returns the Effects to execute, in order. Randomness (jitter,
// watch timeouts) comes from Config.Rand, so a seeded source makes every
// run reproducible. A Machine is not safe for concurrent use.
type Machine[T store.Object] struct {
	cfg Config[T] // defaults applied; never changes
	// now is the time given to the Step in progress.
	now time.Time
	// out collects the effects of the Step in progress; it is reused by the
	// next Step, so a returned slice is valid only until then.
	out []Effect
	// applies holds the Apply effects of the Step in progress, which out
	// points into, so that a watch event costs no allocation.
	applies []Apply[T]
	// started is set by Start; Step ignores inputs before it.
	started bool
	phase   Phase

	// lastSyncRV is the resource version of the last list, event or
	// bookmark applied; "" until the first list completes.
	lastSyncRV string
	// unanchored is set by a completed list without a resource version;
	// see anchor.
	unanchored bool
	// rvUnavailable is set when a list or streaming list at lastSyncRV got
	// Expired; the next one then asks for RV="" (a quorum read). Cleared by
	// a completed list.
	rvUnavailable bool
	// lastFail is the reason of the last failure that backed off; unlike
	// reason it survives a success, so repeated 410s can be told apart.
	lastFail Reason
	// synced is set once a Replace has been emitted and not refused.
	synced bool
	// undo holds lastSyncRV and synced as they were before the last
	// Replace, restored if the store refuses it.
	undo struct {
		rv     string
		synced bool
	}

	// reason, lastErr and failures back Status; see there.
	reason   Reason
	lastErr  error
	failures int

	backoff backoff
	// wakeAt is when PhaseBackoff ends; then the machine performs after,
	// and a new cycle is counted with cause as its relist cause.
	wakeAt time.Time
	after  resume
	cause  Reason

	// list is the paginated list in flight (PhaseListing, or a confirming
	// list while watching).
	list listState[T]
	// confirm, when not nil, is the confirmation of an unanchored list:
	// see confirmState.
	confirm *confirmState[T]
	// unpagedNext makes the next paginated list ask for everything at once:
	// set when the server's pagination broke (a continue token repeated).
	unpagedNext bool
	// paginatedResult is set when the server paged an RV="0" list: the
	// watch cache is off for this resource, so relists keep paging.
	paginatedResult bool

	// pagedReplace is Config.PagedReplace: lists of more than one page go
	// to the store page by page (ReplacePage, ReplaceEnd) instead of as one
	// Replace.
	pagedReplace bool

	// stream holds the objects of a streaming list (PhaseStreaming) until
	// the store takes them; nil otherwise.
	stream *streamBuffer[T]
	// streamFallback, once set, is why streaming lists were given up for
	// good: every later cycle is a paginated list.
	streamFallback Reason
	// watch is the watch or streaming list being opened or open.
	watch watchState

	// relists paces requested relists (Relist): relistBurst in a row
	// start at once, then one per Backoff.Initial, so an owner that asks in
	// a loop cannot make the machine list faster than that. pendingRelist,
	// when not zero, is when a request that found it empty will start a
	// cycle.
	relists       bucket
	pendingRelist time.Time
	// closes paces re-watches after watches the server closed quickly (see
	// longWatch): the first in a while re-watches at once, a run of them
	// backs off. busyCloses paces those that delivered busyCloseEvents
	// events first (a server shedding a watch it could not feed).
	closes, busyCloses bucket
}

// listState is a paginated list in progress.
type listState[T store.Object] struct {
	rv    string // the resource version the first page asked for
	limit int64  // the page size sent; 0 when not paging
	pages int    // pages received so far
	// pageRV is the first page's resource version: the list's snapshot.
	pageRV string
	items  []T
	// shared: some page's items point into its response (ListPage.Shared).
	shared bool
	// tokens are the continue tokens received so far: a server that hands
	// one out twice would page for ever.
	tokens map[string]struct{}
}

// confirmState is the second list that follows a list without a resource
// version. Such a list cannot be tied to the watch after it, which starts
// from "": whatever was deleted between the list and the watch's start is
// never told by the watch. So once the watch is open, the machine lists
// again; every deletion made before the watch opened shows in that list,
// and every change after it is on the watch. The watch's events are held
// while the list runs, then applied after it, in order, so each object
// ends at its newest state whichever of the two saw it last.
type confirmState[T store.Object] struct {
	// asked is set when the watch opened and the list was asked for.
	asked bool
	// held are the watch's effects (Apply[T], Progress) meanwhile.
	held []Effect
}

// newToken records a continue token and reports whether it is new.
func (l *listState[T]) newToken(tok string) bool {
	if _, seen := l.tokens[tok]; seen {
		return false
	}
	if l.tokens == nil {
		l.tokens = map[string]struct{}{}
	}
	l.tokens[tok] = struct{}{}
	return true
}

// watchState is the watch being opened or open.
type watchState struct {
	rv   string // resource version the watch asked for
	open bool   // WatchOpened seen and no WatchClosed/error since
	// start is when the Watch effect was emitted; lastActivity is the last
	// open or event, which the idle watchdog measures from.
	start, lastActivity time.Time
	events              int // events received on this watch
	// timeout is the timeoutSeconds the watch asked for.
	timeout time.Duration
	// propagate: ADDED events advance lastSyncRV. False for a watch from
	// ""/"0" until a non-ADDED event shows the synthetic ADDED are over.
	propagate bool
	// pos is the watch's position in the server's history: the numeric
	// resource version it resumed from, or of the last event or bookmark
	// that propagated; 0 while unknown. Events must move it forward and
	// bookmarks must not move it back (see wentBack).
	pos uint64
}

// NewMachine returns a machine in PhaseListing that has not yet asked for
// anything; call Start.
func NewMachine[T store.Object](cfg Config[T]) (*Machine[T], error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Machine[T]{
		cfg:           cfg,
		backoff:       backoff{cfg: cfg.Backoff},
		pagedReplace:  cfg.PagedReplace,
		relists:       bucket{burst: relistBurst, every: cfg.Backoff.Initial},
		closes:        bucket{burst: quickCloseBurst, every: quickCloseEvery},
		busyCloses:    bucket{burst: busyCloseBurst, every: busyCloseEvery},
		lastSyncRV:    cfg.ResumeResourceVersion,
		rvUnavailable: cfg.ResumeUnavailable,
	}, nil
}

// Start begins the first list cycle; later calls return nil.
func (m *Machine[T]) Start(now time.Time) []Effect {
	if m.started {
		return nil
	}
	m.started = true
	m.begin(now)
	m.cfg.Metrics.Relist(ReasonNone)
	m.startCycle()
	return m.out
}

// Step feeds one input observed at now and returns the effects to execute.
// Inputs that do not belong to the current phase (e.g. a late ListPage
// while watching) are ignored. The returned slice, and the *Apply[T]
// effects in it, are reused by the next call to Step: use them before then.
func (m *Machine[T]) Step(now time.Time, in Input) []Effect {
	if !m.started || m.phase == PhaseStopped {
		return nil
	}
	m.begin(now)
	switch in := in.(type) {
	case Stop:
		m.stop()
	case Tick:
		m.tick()
	case ListPage:
		m.onListPage(in)
	case ListFailed:
		m.onListFailed(in.Err)
	case WatchOpened:
		m.onWatchOpened()
	case WatchFailed:
		m.onWatchFailed(in.Err)
	case WatchEvent:
		m.onWatchEvent(in.Event)
	case WatchClosed:
		m.onWatchClosed()
	case ReplaceFailed:
		m.onReplaceFailed(in.Err)
	case Relist:
		m.onRelist()
	}
	return m.out
}

// Deadline is the time at which the machine wants a Tick: the end of a
// backoff, the idle watchdog of a watch, or the StreamDeadline of a
// streaming list, whichever comes first. ok is false when it needs none.
func (m *Machine[T]) Deadline() (at time.Time, ok bool) {
	if m.phase == PhaseBackoff {
		return m.wakeAt, true
	}
	at = m.pendingRelist
	if !m.watching() {
		return at, !at.IsZero()
	}
	if end, ok := m.streamDeadline(); ok && (at.IsZero() || end.Before(at)) {
		at = end
	}
	if idle, ok := m.idleDeadline(); ok && (at.IsZero() || idle.Before(at)) {
		at = idle
	}
	return at, !at.IsZero()
}

func (m *Machine[T]) idleDeadline() (time.Time, bool) {
	if m.cfg.IdleTimeout > 0 {
		return m.watch.lastActivity.Add(m.cfg.IdleTimeout), true
	}
	return time.Time{}, false
}

func (m *Machine[T]) streamDeadline() (time.Time, bool) {
	if m.phase == PhaseStreaming && m.cfg.StreamDeadline > 0 {
		return m.watch.start.Add(m.cfg.StreamDeadline), true
	}
	return time.Time{}, false
}

// Status returns a snapshot of the machine's health.
func (m *Machine[T]) Status() Status {
	return Status{
		Phase:                      m.phase,
		Synced:                     m.synced,
		Reason:                     m.reason,
		LastError:                  m.lastErr,
		Failures:                   m.failures,
		LastSyncResourceVersion:    m.lastSyncRV,
		ResourceVersionUnavailable: m.rvUnavailable,
		StreamFallback:             m.streamFallback,
	}
}

func (m *Machine[T]) begin(now time.Time) {
	m.now = now
	clear(m.out)
	m.out = m.out[:0]
	clear(m.applies)
	m.applies = m.applies[:0]
}

func (m *Machine[T]) emit(e Effect) { m.out = append(m.out, e) }

// emitApply emits an Apply effect as a pointer into m.applies: boxing the
// struct itself into an Effect would allocate once per watch event.
func (m *Machine[T]) emitApply(a Apply[T]) {
	m.applies = append(m.applies, a)
	m.emit(&m.applies[len(m.applies)-1])
}

// startCycle begins a list cycle: a streaming list unless it is off. The
// caller counts the relist and its cause.
func (m *Machine[T]) startCycle() {
	if m.cfg.WatchList == WatchListOff || m.streamFallback != ReasonNone && m.cfg.WatchList != WatchListForce {
		m.startList(m.relistRV())
		return
	}
	m.startStream()
}

// relistRV is the resource version a paginated list asks for: "0" (watch
// cache) at first, the last synced one afterwards, "" after Expired.
func (m *Machine[T]) relistRV() string {
	switch {
	case m.rvUnavailable:
		return ""
	case m.lastSyncRV == "":
		return "0"
	}
	return m.lastSyncRV
}

func (m *Machine[T]) stop() {
	if m.phase == PhaseWatching || m.phase == PhaseStreaming {
		m.emit(StopWatch{})
	}
	m.phase = PhaseStopped
}

func (m *Machine[T]) tick() {
	switch m.phase {
	case PhaseBackoff:
		if !m.now.Before(m.wakeAt) {
			m.resume()
		}
	case PhaseWatching, PhaseStreaming:
		if at, ok := m.streamDeadline(); ok && !m.now.Before(at) {
			m.onStreamDeadline()
		} else if at, ok := m.idleDeadline(); ok && !m.now.Before(at) {
			m.onIdle()
		}
	}
	if !m.pendingRelist.IsZero() && !m.now.Before(m.pendingRelist) {
		m.pendingRelist = time.Time{}
		m.onRelist()
	}
}

// onRelist starts a new list cycle at once, dropping the watch, stream or
// list in progress (a paged list in progress is abandoned by the new
// list's first page); see Relist.
func (m *Machine[T]) onRelist() {
	switch m.phase {
	case PhaseStopped:
		return
	case PhaseBackoff:
		m.after, m.cause = resumeCycle, ReasonRequested
		return
	}
	if wait := m.relists.take(m.now); wait > 0 {
		m.pendingRelist = m.now.Add(wait) // one relist then, however many ask before
		return
	}
	switch m.phase {
	case PhaseWatching, PhaseStreaming:
		m.emit(StopWatch{})
		m.watch.open = false
	}
	m.stream = nil
	m.list = listState[T]{}
	m.cfg.Metrics.Relist(ReasonRequested)
	m.startCycle()
}

// relistBurst is how many requested relists may start back to back.
const relistBurst = 3

func (m *Machine[T]) resume() {
	switch m.after {
	case resumeWatch:
		m.rewatch()
	case resumeStream:
		m.startStream()
	default:
		m.cfg.Metrics.Relist(m.cause)
		m.startCycle()
	}
}
