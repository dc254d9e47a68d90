package workqueue

// Entry state bits. An entry with no bit set is free and not in the index.
const (
	// stQueued: in the ready set (ring or priority heap); never together
	// with stProcessing.
	stQueued uint8 = 1 << iota
	// stProcessing: handed out by Get, Done not called yet.
	stProcessing
	// stDirty: added again while processing; queued again at Done. Only
	// together with stProcessing.
	stDirty
	// stWaiting: in the delay heap; independent of the other bits.
	stWaiting
)

// entry is the per-item record the plain Add/Get/Done path uses. Entries
// live in a slab (Typed.slab) and are addressed by index, so the hot paths
// allocate nothing per item; for string items an entry is 64 bytes.
type entry[T comparable] struct {
	item T
	// key orders ready items: enqueue time (ns since Typed.epoch, 0 before
	// the queue needed timestamps) minus priority × aging interval.
	key int64
	// seq is a queue-wide enqueue counter: ties on key go first-in first-out.
	seq uint64
	// enqAt is when the entry was last queued (ns since Typed.epoch; 0
	// before the queue turned timed).
	enqAt int64
	// tag is q.index.hash(item), kept to find the index slot on release.
	tag uint32
	// ringGen identifies the entry's live ring slot; slots with another
	// generation are stale and skipped.
	ringGen uint32
	// heapPos is the position in the ready heap, or -1 when the entry is in
	// the ring or not queued.
	heapPos int32
	// priority is the priority of the pending (queued or dirty) add.
	priority int32
	state    uint8
}

// coldEntry holds the per-item fields of delays and metrics, in a slab
// parallel to the entries (same index) so that plain Add/Get/Done never
// touch them. No field needs resetting when a slot is reused.
type coldEntry struct {
	// due is the delay due time, ns since Typed.epoch; valid with stWaiting.
	due int64
	// addedAt and startedAt feed the latency and work-duration metrics (ns
	// since Typed.epoch); only written when metrics are enabled.
	addedAt, startedAt int64
	// delayPriority is the priority used when the delayed add fires.
	delayPriority int32
	// dgen identifies the entry's live delay node (see delayNode); it
	// survives reuse of the slot so old nodes stay stale.
	dgen uint32
}

// lookupOrAlloc returns the slab index for item, creating a fresh entry;
// tag is q.index.hash(item), computed before taking the lock.
func (q *Typed[T]) lookupOrAlloc(item T, tag uint32) int32 {
	pos, idx, ok := q.index.find(tag, item, &q.slab)
	if ok {
		return idx
	}
	if n := len(q.free); n > 0 {
		idx = q.free[n-1]
		q.free = q.free[:n-1]
	} else {
		idx = q.slab.grow()
		q.cold.grow()
	}
	e := q.slab.at(idx)
	*e = entry[T]{item: item, tag: tag, heapPos: -1, ringGen: e.ringGen}
	q.index.insertAt(pos, tag, idx)
	return idx
}

// lookup returns item's slab index, if it has an entry; tag is
// q.index.hash(item).
func (q *Typed[T]) lookup(item T, tag uint32) (idx int32, ok bool) {
	_, idx, ok = q.index.find(tag, item, &q.slab)
	return idx, ok
}

// release frees entry idx when no state bit is left: its index slot is
// found from the stored tag, without hashing the item again.
func (q *Typed[T]) release(idx int32) {
	e := q.slab.at(idx)
	if e.state != 0 {
		return
	}
	q.index.deleteIdx(e.tag, idx)
	var zero T
	e.item = zero // drop references held by T
	e.ringGen++   // invalidate any stale ring slot
	q.free = append(q.free, idx)
}
