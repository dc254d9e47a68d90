package informer

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

// DeliveryMode chooses how a listener buffers notifications its handler has
// not taken yet.
type DeliveryMode uint8

const (
	// Coalesce keeps at most one pending entry per key: a handler that lags
	// sees each object's newest state, with an update carrying the last
	// object it saw. Memory is bounded by the number of keys, not by the
	// number of events. Objects that are created and deleted while the
	// handler lags are never shown to it.
	Coalesce DeliveryMode = iota
	// InOrder delivers every notification in arrival order, as client-go
	// does. Memory grows with the handler's lag.
	InOrder
)

// listenerOptions configures one handler's listener (internal: HandlerOptions is the public form).
type listenerOptions struct {
	// Mode is Coalesce (the default) or InOrder.
	Mode DeliveryMode
	// Clock measures lag and handler time. Nil means the real clock.
	Clock clock.PassiveClock
	// Logger receives handler panics. Zero means discard.
	Logger logr.Logger
}

// listener runs one handler on its own goroutine behind its own buffer, so
// a slow handler delays nobody else.
type listener[T any] struct {
	h     Handler[T]
	guard guarded[T]
	clock clock.PassiveClock
	log   logr.Logger
	// onPanic, when set, takes handler panics instead of the log line,
	// with panicLog in the context; see compatQuirks.onPanic.
	onPanic  func(ctx context.Context, r any)
	panicLog logr.Logger
	// keyOf works out an object's key for a panic's log line when the
	// buffer does not keep keys (InOrder); set by the informer.
	keyOf func(T) (string, error)

	mu   sync.Mutex
	cond sync.Cond // signalled on new work and on stop; uses mu
	// buf holds what the handler has not taken yet, as the delivery mode
	// keeps it (see buffer).
	buf buffer[T]
	// delivered is the number (see buffer) of the last entry whose handler
	// calls have returned; initialSeq, once initialMarked, is the number of
	// the last arrival belonging to the initial list.
	initialSeq    uint64
	initialMarked bool
	delivered     atomic.Uint64
	// synced is closed once the initial list has been delivered.
	synced     chan struct{}
	syncedOnce sync.Once
	// trimmed is set once the buffer has given back the initial list's
	// memory (drainLocked), the first time it emptied after synced; mu.
	trimmed bool
	stopped bool
	// busySince is when the listener started delivering, refreshed every
	// segment entries (0: idle).
	busySince atomic.Int64

	processed, panics atomic.Int64
	handlerNanos      atomic.Int64
}

func newListener[T any](h Handler[T], opts listenerOptions) *listener[T] {
	l := &listener[T]{h: h, buf: newBuffer[T](opts.Mode), clock: opts.Clock, log: opts.Logger,
		synced: make(chan struct{})}
	if l.clock == nil {
		l.clock = clock.RealClock{}
	}
	l.cond.L = &l.mu
	l.guard.l = l
	return l
}

func (l *listener[T]) now() int64 { return l.clock.Now().UnixNano() }

// stamp is the time of one batch of notifications, read from clock at most
// once and only if an entry starts waiting.
type stamp struct {
	clock clock.PassiveClock
	ns    int64
	read  bool
}

func (s *stamp) get() int64 {
	if !s.read {
		s.ns, s.read = s.clock.Now().UnixNano(), true
	}
	return s.ns
}

// add queues one notification; see addBatch.
func (l *listener[T]) add(n *notification[T]) {
	st := stamp{clock: l.clock}
	l.addBatch([]notification[T]{*n}, true, &st)
}

// addBatch queues notes, in order, under one lock; it never blocks on the
// handler. Resyncs (Resynced) are skipped unless syncs is set. Entries that
// start waiting are stamped with st, which reads the clock at most once
// for the batch; a notification that folds into an entry already pending
// needs no time. The listener is woken only when its buffer goes from
// empty to non-empty: otherwise it is busy and will find the new entries
// before it waits again.
func (l *listener[T]) addBatch(notes []notification[T], syncs bool, st *stamp) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	wasEmpty := l.buf.empty()
	for i := range notes {
		n := &notes[i]
		if n.kind == noteResynced && !syncs {
			continue
		}
		l.buf.add(n, st.get())
	}
	if wasEmpty && !l.buf.empty() {
		l.cond.Signal()
	}
}

// markInitial records that everything queued so far belongs to the initial
// list: hasSynced turns true once it has all been delivered.
func (l *listener[T]) markInitial() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.initialSeq, l.initialMarked = l.buf.lastSeq(), true
	l.checkSynced()
	if l.buf.empty() {
		l.trimLocked()
	}
}

// trimLocked, the first time it finds the listener synced, gives back
// the buffer's memory of the initial list (a burst as large as the
// cache, delivered by now) at once, not after a window of later traffic
// that a quiet informer may never see. Called with mu held and nothing
// pending.
func (l *listener[T]) trimLocked() {
	if !l.trimmed && l.isSynced() {
		l.trimmed = true
		l.buf.trim()
	}
}

// checkSynced closes synced once the initial list has been delivered; mu held.
func (l *listener[T]) checkSynced() {
	if l.initialMarked && l.delivered.Load() >= l.initialSeq {
		l.syncedOnce.Do(func() { close(l.synced) })
	}
}

// hasSynced reports whether the handler has been given the whole initial list.
func (l *listener[T]) hasSynced() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.initialMarked && l.delivered.Load() >= l.initialSeq
}

// isSynced reports whether synced is closed, without locking.
func (l *listener[T]) isSynced() bool {
	select {
	case <-l.synced:
		return true
	default:
		return false
	}
}

// stop ends run and drops whatever is pending.
func (l *listener[T]) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	l.buf.clear()
	l.cond.Broadcast()
}

// segment is how many entries a listener delivers between two clock
// reads while it has work: handler time is accounted per segment, not per
// call.
const segment = 64

// run delivers notifications until stop or ctx ends. Once woken it drains
// everything pending, one entry at a time, releasing the lock while the
// handler runs; it reads the clock when it starts and every segment
// entries, not for every call. The lock taken back after a call is the one
// the next take, or the wait for more, runs under: a handler that keeps up
// costs the listener one lock per notification besides addBatch's.
func (l *listener[T]) run(ctx context.Context) {
	defer context.AfterFunc(ctx, l.stop)()
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		for l.buf.empty() && !l.stopped {
			l.cond.Wait()
		}
		if l.stopped || !l.drainLocked() {
			return
		}
	}
}

// drainLocked delivers entries until none is pending; it is called and
// returns with l.mu held, and returns false once the listener is stopped.
func (l *listener[T]) drainLocked() bool {
	start := l.now()
	l.busySince.Store(start)
	defer func() {
		end := l.now()
		l.handlerNanos.Add(end - start)
		l.busySince.Store(0)
	}()
	for i := 1; ; i++ {
		if l.stopped {
			return false
		}
		key, seq, p, ok := l.buf.take()
		if !ok {
			l.trimLocked()
			return true
		}
		calls := l.callUnlocked(key, &p)
		l.delivered.Store(seq)
		l.processed.Add(int64(calls))
		if i%segment == 0 {
			now := l.now()
			l.handlerNanos.Add(now - start)
			start = now
			l.busySince.Store(start)
		}
		if !l.isSynced() {
			l.checkSynced()
		}
	}
}

// callUnlocked runs call with l.mu released, and takes it back even if a
// panic handler (onPanic) raises the panic again.
func (l *listener[T]) callUnlocked(key string, p *pending[T]) int {
	l.mu.Unlock()
	defer l.mu.Lock()
	return l.call(key, p)
}

// call runs the handler for one entry. Each handler call recovers its own
// panic (see guarded), so a coalesced delete and re-create make two calls
// even if the first panics.
func (l *listener[T]) call(key string, p *pending[T]) (calls int) {
	l.guard.key, l.guard.obj = key, p.object()
	return p.deliver(&l.guard)
}

// guarded is the listener's handler as its deliveries see it: every call
// recovers its own panic, which is counted and logged with the key, so a
// panic costs only the call that made it. It lives in the listener and is
// used only by the listener's goroutine; key is the entry being delivered.
type guarded[T any] struct {
	l   *listener[T]
	key string
	obj T // the entry's object, for its key if key is ""
}

func (g *guarded[T]) OnAdd(obj T, initial bool) {
	defer g.recover()
	g.l.h.OnAdd(obj, initial)
}

func (g *guarded[T]) OnUpdate(old, new T) {
	defer g.recover()
	g.l.h.OnUpdate(old, new)
}

func (g *guarded[T]) OnDelete(obj T, finalStateUnknown bool) {
	defer g.recover()
	g.l.h.OnDelete(obj, finalStateUnknown)
}

// recover must be deferred directly by a handler call.
func (g *guarded[T]) recover() {
	if r := recover(); r != nil {
		g.l.panicked(g.entryKey(), r)
	}
}

// entryKey is the key of the entry being delivered, worked out from its
// object if the buffer did not keep it.
func (g *guarded[T]) entryKey() string {
	if g.key != "" || g.l.keyOf == nil {
		return g.key
	}
	key, _ := g.l.keyOf(g.obj)
	return key
}

// panicked accounts for one handler call that panicked with r: counted,
// then logged, or handed to onPanic with the handler's logger in the
// context. It must be called directly by guarded.recover: onPanic may
// count the frames up to the panic (see clientGoPanicHandlers).
func (l *listener[T]) panicked(key string, r any) {
	l.panics.Add(1)
	if l.onPanic != nil {
		l.onPanic(logr.NewContext(context.Background(), l.panicLog), r)
		return
	}
	l.log.Error(fmt.Errorf("panic: %v", r), "event handler panicked; continuing with the next notification", "key", key)
}

// ListenerStats describes one handler's listener at a moment.
type ListenerStats struct {
	// Pending is the number of keys (Coalesce) or notifications (InOrder)
	// waiting for the handler.
	Pending int
	// OldestPending is how long the oldest waiting entry has waited.
	OldestPending time.Duration
	// Busy is how long the handler has been running without a break
	// (0: idle). The listener reads the clock when it starts delivering and
	// then every 64 entries, not for every call, so Busy covers the call in
	// progress and up to 63 calls before it.
	Busy time.Duration
	// Processed counts handler calls made, including ones that panicked.
	Processed int64
	// Coalesced counts notifications folded into an entry already pending.
	Coalesced int64
	// Panics counts handler calls that panicked.
	Panics int64
	// HandlerTime is the total time spent in the handler, accounted every
	// 64 entries and whenever the listener runs out of work.
	HandlerTime time.Duration
}

// listenerStatsJSON is ListenerStats as status pages serve it, durations
// in seconds.
type listenerStatsJSON struct {
	Pending              int     `json:"pending"`
	OldestPendingSeconds float64 `json:"oldestPendingSeconds"`
	BusySeconds          float64 `json:"busySeconds"`
	Processed            int64   `json:"processed"`
	Coalesced            int64   `json:"coalesced"`
	Panics               int64   `json:"panics"`
	HandlerSeconds       float64 `json:"handlerSeconds"`
}

// MarshalJSON writes the figures as status pages serve them.
func (s ListenerStats) MarshalJSON() ([]byte, error) {
	return json.Marshal(listenerStatsJSON{s.Pending, s.OldestPending.Seconds(), s.Busy.Seconds(), s.Processed, s.Coalesced,
		s.Panics, s.HandlerTime.Seconds()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *ListenerStats) UnmarshalJSON(b []byte) error {
	var in listenerStatsJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	seconds := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	*s = ListenerStats{Pending: in.Pending, OldestPending: seconds(in.OldestPendingSeconds), Busy: seconds(in.BusySeconds),
		Processed: in.Processed, Coalesced: in.Coalesced, Panics: in.Panics, HandlerTime: seconds(in.HandlerSeconds)}
	return nil
}

func (l *listener[T]) stats() ListenerStats {
	now := l.now()
	l.mu.Lock()
	n, oldest := l.buf.pending()
	s := ListenerStats{Pending: n, Coalesced: l.buf.coalesced()}
	if n > 0 {
		s.OldestPending = time.Duration(now - oldest)
	}
	l.mu.Unlock()
	if since := l.busySince.Load(); since != 0 {
		s.Busy = time.Duration(now - since)
	}
	s.Processed, s.Panics = l.processed.Load(), l.panics.Load()
	s.HandlerTime = time.Duration(l.handlerNanos.Load())
	return s
}
