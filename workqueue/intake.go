package workqueue

import (
	"sync"
	"sync/atomic"
)

// intakeFlush is the intake length at which Add applies the intake itself,
// bounding its memory (duplicates collapse only when applied).
const intakeFlush = 64

// intakeRec is one Add waiting in the intake.
type intakeRec[T comparable] struct {
	item T
	tag  uint32 // q.index.hash(item)
}

// intake buffers plain Adds (when metrics are off) so that producers rarely
// take the queue's main lock: Add appends here under a small lock of its
// own, and whoever holds the main lock next applies the buffer, in order,
// before anything else. As every operation that observes or changes the
// queue applies it first, no caller can tell a buffered Add from an
// applied one.
type intake[T comparable] struct {
	mu sync.Mutex
	// closed is set under mu at shutdown; later Adds are rejected.
	closed bool
	buf    []intakeRec[T]
	// n mirrors len(buf) for lock-free peeks; written under mu.
	n atomic.Int32
}

// Add marks item as needing processing. A waiting duplicate collapses into
// one; an item being processed is queued once more when Done is called.
// After shutdown the item is dropped and reported as MisuseAddAfterShutDown.
func (q *Typed[T]) Add(item T) {
	if q.metrics != nil {
		// Metrics are read from outside: apply the Add at once so that
		// depth and adds are exact when it returns.
		_ = q.addWith(item, 0, 0, false)
		return
	}
	rec := intakeRec[T]{item: item, tag: q.index.hash(item)}
	q.in.mu.Lock()
	if q.in.closed {
		q.in.mu.Unlock()
		q.reportMisuse(MisuseAddAfterShutDown, item)
		return
	}
	q.in.buf = append(q.in.buf, rec)
	n := len(q.in.buf)
	q.in.n.Store(int32(n))
	q.in.mu.Unlock()
	// A Get about to wait counts itself in getters before its last look at
	// the intake, so either it sees this item or this sees it waiting.
	if n >= intakeFlush || q.getters.Load() > 0 {
		q.lock()
		q.mu.Unlock()
	}
}

// lock takes the main lock and applies the buffered Adds.
func (q *Typed[T]) lock() {
	q.mu.Lock()
	q.applyIntakeLocked()
}

// applyIntakeLocked applies the buffered Adds in order; q.mu is held.
func (q *Typed[T]) applyIntakeLocked() {
	if q.in.n.Load() == 0 {
		return
	}
	q.in.mu.Lock()
	batch := q.in.buf
	q.in.buf = q.spare[:0]
	q.in.n.Store(0)
	q.in.mu.Unlock()
	for i := range batch {
		q.addLocked(q.lookupOrAlloc(batch[i].item, batch[i].tag), 0)
	}
	clear(batch) // drop references held by T
	q.spare = batch[:0]
}

// closeIntakeLocked rejects later Adds and applies the accepted ones; q.mu
// is held.
func (q *Typed[T]) closeIntakeLocked() {
	q.in.mu.Lock()
	q.in.closed = true
	q.in.mu.Unlock()
	q.applyIntakeLocked()
}
