package workqueue

import "math"

// addLocked records that entry idx needs processing with priority prio:
// a queued entry only keeps the higher priority, a processing entry becomes
// dirty, anything else is queued.
func (q *Typed[T]) addLocked(idx int32, prio int32) {
	e := q.slab.at(idx)
	switch {
	case e.state&stQueued != 0:
		if q.custom != nil {
			q.custom.Touch(e.item)
			return
		}
		q.raiseLocked(idx, prio)
	case e.state&stProcessing != 0:
		if e.state&stDirty != 0 {
			e.priority = max(e.priority, prio)
			return
		}
		e.state |= stDirty
		e.priority = prio
		if q.metrics != nil {
			q.metrics.add(&q.cold.at(idx).addedAt, q.now())
		}
	default:
		if q.metrics != nil {
			q.metrics.add(&q.cold.at(idx).addedAt, q.now())
		}
		q.enqueueLocked(idx, prio)
	}
}

// enqueueLocked puts entry idx into the ready set and wakes one Get.
func (q *Typed[T]) enqueueLocked(idx int32, prio int32) {
	if prio != 0 {
		q.timed = true
	}
	e := q.slab.at(idx)
	e.state |= stQueued
	e.priority = prio
	q.seq++
	e.seq = q.seq
	e.enqAt = 0
	if q.timed {
		e.enqAt = q.now()
	}
	e.key = agingKey(e.enqAt, prio, q.aging)
	switch {
	case q.custom != nil:
		q.custom.Push(e.item)
	case prio == 0:
		q.fifo.Push(ringSlot{idx: idx, gen: e.ringGen})
		q.fifoLive++
	default:
		q.prio.push(idx)
	}
	q.queued++
	if q.getters.Load() > 0 {
		q.ready.Signal()
	}
}

// raiseLocked raises the priority of queued entry idx to prio if higher,
// moving it from the FIFO ring to the priority heap when needed.
func (q *Typed[T]) raiseLocked(idx int32, prio int32) {
	e := q.slab.at(idx)
	if prio <= e.priority {
		return
	}
	q.timed = true
	e.priority = prio
	e.key = agingKey(e.enqAt, prio, q.aging)
	if e.heapPos >= 0 {
		q.prio.fix(int(e.heapPos))
		return
	}
	e.ringGen++ // its ring slot is stale from now on
	q.fifoLive--
	q.prio.push(idx)
}

// popReady removes and returns the next ready entry; q.queued must be > 0.
func (q *Typed[T]) popReady() int32 {
	for q.fifo.Len() > 0 {
		s := *q.fifo.Peek()
		if q.slab.at(s.idx).ringGen == s.gen {
			break
		}
		q.fifo.Pop() // stale: the entry moved to the heap or was freed
	}
	q.queued--
	if q.fifoLive > 0 {
		s := *q.fifo.Peek()
		if q.prio.len() == 0 || !q.heapFirst(s.idx) {
			q.fifo.Pop()
			q.fifoLive--
			return s.idx
		}
	}
	return q.prio.pop()
}

// heapFirst reports whether the heap's top goes before ring entry idx.
func (q *Typed[T]) heapFirst(idx int32) bool {
	r, h := q.slab.at(idx), q.slab.at(q.prio.a[0])
	if h.key != r.key {
		return h.key < r.key
	}
	return h.seq < r.seq
}

// agingKey is the ready-order key of an item enqueued at enqAt with priority
// prio: enqAt − prio×aging, saturating. Smaller keys go first, so an item
// ages one priority level per aging interval of waiting.
func agingKey(enqAt int64, prio int32, aging int64) int64 {
	if prio == 0 {
		return enqAt
	}
	p := int64(prio)
	if aging > math.MaxInt64/max(p, -p) {
		if p > 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	boost := p * aging
	switch {
	case boost > 0 && enqAt < math.MinInt64+boost:
		return math.MinInt64
	case boost < 0 && enqAt > math.MaxInt64+boost:
		return math.MaxInt64
	}
	return enqAt - boost
}

// clampPriority maps an API priority onto the supported range.
func clampPriority(p int) int32 {
	return int32(min(max(p, -maxPriority), maxPriority))
}

// maxInflight bounds the inflight list that Done scans before hashing.
const maxInflight = 32

// takeInflight finds item among the listed in-flight entries and unlists
// it. A miss says nothing: the item may be in flight but unlisted.
func (q *Typed[T]) takeInflight(item T) (int32, bool) {
	for i := len(q.inflight) - 1; i >= 0; i-- {
		idx := q.inflight[i]
		if e := q.slab.at(idx); e.state&stProcessing != 0 && e.item == item {
			q.unlistAt(i)
			return idx, true
		}
	}
	return -1, false
}

// unlistInflight removes idx from the inflight list if it is there.
func (q *Typed[T]) unlistInflight(idx int32) {
	for i, x := range q.inflight {
		if x == idx {
			q.unlistAt(i)
			return
		}
	}
}

func (q *Typed[T]) unlistAt(i int) {
	last := len(q.inflight) - 1
	q.inflight[i] = q.inflight[last]
	q.inflight = q.inflight[:last]
}
