package informer

import (
	"context"
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

// ListenerOptions configures one handler's listener.
type ListenerOptions struct {
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
	mode  DeliveryMode
	clock clock.PassiveClock
	log   logr.Logger

	mu   sync.Mutex
	cond sync.Cond // signalled on new work and on stop; uses mu
	// keys holds, in first-arrival order, each key with an entry in entries
	// (Coalesce mode); every key in entries is in keys exactly once.
	keys    ring[queuedKey]
	entries map[string]pending[T]
	// fifo holds every undelivered notification (InOrder mode).
	fifo ring[queuedNote[T]]
	// seq numbers arrivals; delivered is the seq of the last entry whose
	// handler calls have returned; initialSeq, once initialMarked, is the seq
	// of the last arrival belonging to the initial list.
	seq, initialSeq uint64
	initialMarked   bool
	delivered       atomic.Uint64
	// synced is closed once the initial list has been delivered.
	synced     chan struct{}
	syncedOnce sync.Once
	stopped    bool
	// busySince is when the running handler call began (0: idle).
	busySince atomic.Int64

	processed, coalesced, panics atomic.Int64
	handlerNanos                 atomic.Int64
}

type queuedKey struct {
	key string
	seq uint64
}

type queuedNote[T any] struct {
	n     Notification[T]
	seq   uint64
	since int64
}

func newListener[T any](h Handler[T], opts ListenerOptions) *listener[T] {
	l := &listener[T]{h: h, mode: opts.Mode, clock: opts.Clock, log: opts.Logger, entries: map[string]pending[T]{},
		synced: make(chan struct{})}
	if l.clock == nil {
		l.clock = clock.RealClock{}
	}
	l.cond.L = &l.mu
	return l
}

func (l *listener[T]) now() int64 { return l.clock.Now().UnixNano() }

// add queues n; it never blocks on the handler. The clock is read only when
// a new entry starts waiting (its age is what Stats reports), not when a
// notification folds into an entry already pending.
func (l *listener[T]) add(n *Notification[T]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	if l.mode == InOrder {
		l.seq++
		l.fifo.push(queuedNote[T]{n: *n, seq: l.seq, since: l.now()})
		l.cond.Signal()
		return
	}
	if p, ok := l.entries[n.Key]; ok {
		p.merge(n)
		l.entries[n.Key] = p
		l.coalesced.Add(1)
		return
	}
	l.seq++
	l.entries[n.Key] = newPending(n, l.now())
	l.keys.push(queuedKey{key: n.Key, seq: l.seq})
	l.cond.Signal()
}

// markInitial records that everything queued so far belongs to the initial
// list: hasSynced turns true once it has all been delivered.
func (l *listener[T]) markInitial() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.initialSeq, l.initialMarked = l.seq, true
	l.checkSynced()
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
	l.keys.clear()
	l.fifo.clear()
	clear(l.entries)
	l.cond.Broadcast()
}

// run delivers notifications until stop or ctx ends.
func (l *listener[T]) run(ctx context.Context) {
	defer context.AfterFunc(ctx, l.stop)()
	for {
		l.mu.Lock()
		for l.keys.len() == 0 && l.fifo.len() == 0 && !l.stopped {
			l.cond.Wait()
		}
		if l.stopped {
			l.mu.Unlock()
			return
		}
		var (
			p    pending[T]
			note queuedNote[T]
			key  string
			seq  uint64
		)
		if l.mode == InOrder {
			note = l.fifo.pop()
			key, seq = note.n.Key, note.seq
		} else {
			qk := l.keys.pop()
			key = qk.key
			p = l.entries[key]
			delete(l.entries, key)
			seq = qk.seq
		}
		l.mu.Unlock()
		start := l.now()
		l.busySince.Store(start)

		calls := l.call(key, &p, &note)

		l.delivered.Store(seq)
		l.busySince.Store(0)
		if !l.isSynced() {
			l.mu.Lock()
			l.checkSynced()
			l.mu.Unlock()
		}
		l.handlerNanos.Add(l.now() - start)
		l.processed.Add(int64(calls))
	}
}

// call runs the handler for one entry, recovering a panic so that the
// listener carries on with the next key.
func (l *listener[T]) call(key string, p *pending[T], note *queuedNote[T]) (calls int) {
	defer func() {
		if r := recover(); r != nil {
			l.panics.Add(1)
			l.log.Error(fmt.Errorf("panic: %v", r), "event handler panicked; continuing with the next notification", "key", key)
			calls = 1
		}
	}()
	if l.mode == InOrder {
		deliverOne(&note.n, l.h)
		return 1
	}
	return p.deliver(l.h)
}

// ListenerStats describes one handler's listener at a moment.
type ListenerStats struct {
	// Pending is the number of keys (Coalesce) or notifications (InOrder)
	// waiting for the handler.
	Pending int
	// OldestPending is how long the oldest waiting entry has waited.
	OldestPending time.Duration
	// Busy is how long the handler call in progress has run (0: idle).
	Busy time.Duration
	// Processed counts handler calls made, including ones that panicked.
	Processed int64
	// Coalesced counts notifications folded into an entry already pending.
	Coalesced int64
	// Panics counts handler calls that panicked.
	Panics int64
	// HandlerTime is the total time spent in the handler.
	HandlerTime time.Duration
}

func (l *listener[T]) stats() ListenerStats {
	now := l.now()
	l.mu.Lock()
	s := ListenerStats{Pending: l.keys.len() + l.fifo.len()}
	switch {
	case l.keys.len() > 0:
		s.OldestPending = time.Duration(now - l.entries[l.keys.peek().key].since)
	case l.fifo.len() > 0:
		s.OldestPending = time.Duration(now - l.fifo.peek().since)
	}
	l.mu.Unlock()
	if since := l.busySince.Load(); since != 0 {
		s.Busy = time.Duration(now - since)
	}
	s.Processed, s.Coalesced, s.Panics = l.processed.Load(), l.coalesced.Load(), l.panics.Load()
	s.HandlerTime = time.Duration(l.handlerNanos.Load())
	return s
}
