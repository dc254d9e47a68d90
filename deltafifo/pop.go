package deltafifo

import "context"

// pop waits for a key (an event, in order mode) and hands its deltas to
// process, under the lock, so process may update the known store
// consistently. The deltas slice is reused once process returns.
func (c *core[T]) pop(ctx context.Context, process ProcessFunc[T]) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.waitLocked(ctx); err != nil {
		return err
	}
	initial := !c.syncedClosed
	var err error
	if c.cfg.inOrder {
		q := &c.ord
		ev := q.events.pop()
		q.one[0] = ev.d
		err = process(ev.key, q.one[:], initial)
		q.one[0] = Delta[T]{}
	} else {
		key, e := c.co.take()
		err = process(key, e.deltas, initial)
		c.co.recycle(e)
	}
	c.processedLocked(1)
	if c.cfg.metrics != nil {
		c.cfg.metrics.Depth(c.depthLocked())
	}
	return err
}

// batchLimitLocked is how many keys the next batch may hold: at most
// maxBatch, and never past the end of the first Replace, so that
// isInInitialList is the same for the whole batch.
func (c *core[T]) batchLimitLocked() int {
	limit := min(c.cfg.maxBatch, c.depthLocked())
	if c.initialCount > 0 {
		limit = min(limit, c.initialCount)
	}
	return limit
}

// popBatch waits for work and hands up to maxBatch distinct keys to process
// at once. In order mode the batch ends before the first repeated key.
//
// process runs without the lock, so the producer can keep queueing while a
// batch is applied; inflight counts the batch meanwhile. What needs the
// consumer's store consistent with the queue waits for it to finish
// (waitIdleLocked): Replace and Resync, which read the known objects, and
// in coalescing mode Delete, which asks them whether the key exists. Adds
// and updates, and every write in order mode, only append to the queue.
// Len counts the batch until process returns.
func (c *core[T]) popBatch(ctx context.Context, process BatchFunc[T]) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.waitLocked(ctx); err != nil {
		return err
	}
	initial := !c.syncedClosed
	limit := c.batchLimitLocked()
	if c.cfg.inOrder {
		c.takeOrderedBatchLocked(limit)
	} else {
		for range limit {
			key, e := c.co.take()
			c.co.taken = append(c.co.taken, e)
			c.batch = append(c.batch, Item[T]{Key: key, Deltas: e.deltas})
		}
	}
	n := len(c.batch)
	c.inflight = n
	c.mu.Unlock()
	err := c.runBatch(process, initial)
	c.mu.Lock()
	c.inflight = 0
	c.idle.Broadcast()
	c.releaseBatchLocked()
	c.processedLocked(n)
	if c.cfg.metrics != nil {
		c.cfg.metrics.Depth(c.depthLocked())
	}
	return err
}

// runBatch calls process on the batch; the caller has released the lock.
// If process panics, the lock is taken back (and the batch released) before
// the panic goes on, so popBatch's deferred unlock stays balanced; the
// batch's keys are lost, as with Pop.
func (c *core[T]) runBatch(process BatchFunc[T], initial bool) (err error) {
	ok := false
	defer func() {
		if !ok {
			c.mu.Lock()
			c.inflight = 0
			c.idle.Broadcast()
			c.releaseBatchLocked()
		}
	}()
	err = process(c.batch, initial)
	ok = true
	return err
}

// takeOrderedBatchLocked moves up to limit leading events with distinct
// keys into c.batch.
func (c *core[T]) takeOrderedBatchLocked(limit int) {
	q := &c.ord
	if q.seen == nil {
		q.seen = make(map[string]struct{})
	}
	if cap(q.batchDeltas) < limit {
		q.batchDeltas = make([]Delta[T], limit)
	}
	for i := range limit {
		key := q.events.at(0).key
		if _, dup := q.seen[key]; dup {
			break
		}
		q.seen[key] = struct{}{}
		q.batchDeltas[i] = q.events.pop().d
		c.batch = append(c.batch, Item[T]{Key: key, Deltas: q.batchDeltas[i : i+1 : i+1]})
	}
}

// releaseBatchLocked recycles the memory handed to a batch process function.
func (c *core[T]) releaseBatchLocked() {
	if c.cfg.inOrder {
		clear(c.ord.seen)
		clear(c.ord.batchDeltas[:len(c.batch)])
	} else {
		for i, e := range c.co.taken {
			c.co.recycle(e)
			c.co.taken[i] = nil
		}
		c.co.taken = c.co.taken[:0]
	}
	clear(c.batch)
	c.batch = c.batch[:0]
}
