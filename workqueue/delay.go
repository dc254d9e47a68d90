package workqueue

import (
	"math"
	"time"

	"k8s.io/utils/clock"
)

// AddAfter adds item once d has passed. An item that is already delayed
// keeps the earlier of its due times; a zero or negative d adds it now.
// Delaying is independent of the item being queued or processed: when the
// delay fires, the add behaves like Add. Pending delays are dropped at
// shutdown (as in client-go). Each call costs O(log n) in the number of
// delayed items.
func (q *Typed[T]) AddAfter(item T, d time.Duration) {
	_ = q.addWith(item, 0, d, true)
}

// AddWithOptions adds item with a priority and an optional delay (see
// AddOptions). It returns ErrShuttingDown, and drops the item, after shutdown.
func (q *Typed[T]) AddWithOptions(item T, opts AddOptions) error {
	return q.addWith(item, clampPriority(opts.Priority), opts.After, false)
}

// addWith is the common path of AddAfter, AddWithOptions and
// AddRateLimited; retry counts the call in the retries metric.
func (q *Typed[T]) addWith(item T, prio int32, d time.Duration, retry bool) error {
	tag := q.index.hash(item)
	q.lock()
	if q.shuttingDown {
		q.mu.Unlock()
		q.reportMisuse(MisuseAddAfterShutDown, item)
		return ErrShuttingDown
	}
	if retry && q.metrics != nil {
		q.metrics.retries.Inc()
	}
	idx := q.lookupOrAlloc(item, tag)
	if d <= 0 {
		q.addLocked(idx, prio)
	} else {
		q.delayLocked(idx, prio, d)
	}
	q.mu.Unlock()
	return nil
}

// delayLocked schedules entry idx to be added at now+d (d > 0).
func (q *Typed[T]) delayLocked(idx int32, prio int32, d time.Duration) {
	due := q.now()
	if due > math.MaxInt64-int64(d) {
		due = math.MaxInt64
	} else {
		due += int64(d)
	}
	e, c := q.slab.at(idx), q.cold.at(idx)
	if e.state&stWaiting != 0 {
		c.delayPriority = max(c.delayPriority, prio)
		if due >= c.due {
			return
		}
		q.delays.stale++ // the current node is superseded
	} else {
		e.state |= stWaiting
		c.delayPriority = prio
	}
	c.due = due
	c.dgen++
	q.seq++
	q.delays.push(delayNode{due: due, seq: q.seq, idx: idx, gen: c.dgen})
	if top := &q.delays.a[0]; top.idx == idx && top.gen == c.dgen {
		q.kickDelayLoop()
	}
	if q.delays.stale > 1024 && q.delays.stale > q.delays.live() {
		q.delays.compact(q.liveDelay)
	}
}

// liveDelay reports whether n is its entry's current delay node.
func (q *Typed[T]) liveDelay(n *delayNode) bool {
	return q.slab.at(n.idx).state&stWaiting != 0 && q.cold.at(n.idx).dgen == n.gen
}

// kickDelayLoop starts the delay goroutine on first use, or tells it that
// the earliest due time changed.
func (q *Typed[T]) kickDelayLoop() {
	if !q.delayLoopStarted {
		q.delayLoopStarted = true
		q.wg.Add(1)
		go q.delayLoop()
		return
	}
	select {
	case q.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// delayLoop moves due items into the ready set until shutdown. Spurious
// wake-ups are harmless: every round recomputes from the heap.
func (q *Typed[T]) delayLoop() {
	defer q.wg.Done()
	var timer clock.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		wait, ok := q.releaseDue()
		var fire <-chan time.Time
		if ok {
			if timer == nil {
				timer = q.clock.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			fire = timer.C()
		}
		select {
		case <-q.stop:
			return
		case <-q.wake:
		case <-fire:
		}
	}
}

// releaseDue adds every due item and returns the wait until the next one
// (ok is false when nothing is delayed).
func (q *Typed[T]) releaseDue() (wait time.Duration, ok bool) {
	q.lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return 0, false
	}
	now := q.now()
	for len(q.delays.a) > 0 {
		n := q.delays.a[0]
		if !q.liveDelay(&n) {
			q.delays.pop()
			q.delays.stale--
			continue
		}
		if n.due > now {
			return time.Duration(n.due - now), true
		}
		q.delays.pop()
		q.slab.at(n.idx).state &^= stWaiting
		q.addLocked(n.idx, q.cold.at(n.idx).delayPriority)
	}
	return 0, false
}
