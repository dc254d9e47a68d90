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
	err := c.q.pop(process, !c.syncedClosed)
	c.processedLocked(1, false)
	if c.cfg.metrics != nil {
		c.cfg.metrics.Depth(c.depthLocked())
	}
	return err
}

// batchLimitLocked is how many queued elements the next batch may take:
// at most maxBatch, and never past the end of the first Replace, so that
// isInInitialList is the same for the whole batch (with list marks, the
// ListEnd sentinel ends a batch instead). A whole list's batch may take
// everything up to its ListEnd.
func (c *core[T]) batchLimitLocked(whole bool) int {
	if whole {
		return c.depthLocked()
	}
	limit := min(c.cfg.maxBatch, c.depthLocked())
	if c.initialCount > 0 && !c.cfg.listMarks {
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
	whole := c.cfg.wholeLists && (c.beginPending || c.headsListLocked())
	if c.beginPending {
		c.beginPending = false
		c.batch = append(c.batch, Item[T]{List: ListBegin})
	}
	n, ended := c.takeBatchLocked(c.batchLimitLocked(whole), whole)
	c.takeProgressLocked()
	var err error
	if len(c.batch) > 0 { // not only void sentinels
		c.inflight = n
		c.mu.Unlock()
		err = c.runBatch(process, initial)
		c.mu.Lock()
		c.inflight = 0
		c.idle.Broadcast()
		c.releaseBatchLocked()
	}
	c.processedLocked(n, ended)
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

// headsListLocked reports whether the oldest queued element is a
// ListBegin sentinel (mark positions).
func (c *core[T]) headsListLocked() bool {
	return c.cfg.positions && c.depthLocked() > 0 && c.q.headMark() == ListBegin
}

// takeBatchLocked moves up to limit queued elements into c.batch, in
// order: keys (events), and with list marks ListEnd sentinels, the first
// non-void one of which ends the batch. With mark positions, a ListBegin
// sentinel starts a batch: the batch ends before one unless it holds
// nothing yet or allowDup (a whole list's batch goes on into a later
// list that voided its end); it does not count towards limit. In order
// mode the batch also ends before an event whose key it holds, unless
// allowDup. It returns how many elements it popped and whether a ListEnd
// ended the batch.
func (c *core[T]) takeBatchLocked(limit int, allowDup bool) (popped int, ended bool) {
	c.q.beginBatch(limit)
	for popped < limit {
		switch c.headMarkLocked() {
		case ListEnd:
			popped++
			if c.takeEndLocked() {
				return popped, true
			}
			continue
		case ListBegin:
			if len(c.batch) > 0 && !allowDup {
				return popped, false
			}
			popped++
			c.takeBeginLocked()
			// The mark takes no key's place, within what is queued.
			limit = min(limit+1, popped+c.depthLocked())
			continue
		}
		it, ok := c.q.takeItem(allowDup)
		if !ok {
			return popped, false
		}
		c.batch = append(c.batch, it)
		popped++
	}
	return popped, false
}

// releaseBatchLocked recycles the memory handed to a batch process function.
func (c *core[T]) releaseBatchLocked() {
	c.q.endBatch()
	clear(c.batch)
	c.batch = c.batch[:0]
}
