package workqueue

// Custom storage: a queue made with Options.Storage (client-go's
// TypedQueueConfig.Queue, through the drop-in) keeps the ready items in that
// Queue instead of the ring and the heap (see "Custom storage" in the
// package documentation). The hooks are in
// addLocked (Touch), enqueueLocked (Push) and Get (readyLen, popCustom).

// readyLen is the number of items Get can hand out now; q.mu is held.
func (q *Typed[T]) readyLen() int {
	if q.custom != nil {
		return q.custom.Len()
	}
	return q.queued
}

// popCustom pops the custom Queue and returns the slab index of the item it
// returned, or false if that item is not waiting here; q.mu is held and
// q.custom.Len() > 0.
func (q *Typed[T]) popCustom() (int32, bool) {
	item := q.custom.Pop()
	idx, ok := q.lookup(item, q.index.hash(item))
	if !ok || q.slab.at(idx).state&stQueued == 0 {
		q.logger.V(2).Info("workqueue: the custom Queue returned an item that is not waiting; skipped", "queue", q.name, "item", item)
		return -1, false
	}
	q.queued--
	return idx, true
}
