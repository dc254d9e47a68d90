package deltafifo

// write queues an Added, Updated or Deleted change. In coalescing mode a
// deletion of a key that neither the FIFO nor the known store holds is
// dropped, as it would report nothing new.
func (c *core[T]) write(typ DeltaType, obj T) error {
	key, d, err := c.prepare(typ, obj, true)
	if err != nil {
		return err
	}
	var rv string
	if c.cfg.rvOf != nil {
		rv = c.cfg.rvOf(d.Object)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if typ == Deleted && c.q.skipsDeletes() && c.cfg.known != nil {
		// skipDelete below asks the known store, which must not be behind
		// a batch being applied.
		c.waitIdleLocked()
	}
	if c.closed && c.cfg.rejectClosed {
		return c.cfg.closedErr
	}
	c.markPopulatedLocked()
	if c.paging.open {
		c.paging.seenLocked(key)
	} else {
		c.progressedLocked(rv)
	}
	if typ == Deleted && !c.cfg.listMarks && c.q.skipDelete(key, c.cfg.known) {
		return nil
	}
	c.q.push(key, d)
	c.changedLocked()
	return nil
}

// listDeltaType is the type of the deltas a list queues: Replaced in order
// mode, else the configured Sync or Replaced (see queue.listType).
func (c *core[T]) listDeltaType() DeltaType {
	return c.cfg.replaceType
}

// replace queues a relist. It validates and transforms the whole list
// first, so a bad object refuses the call and leaves the queue untouched.
func (c *core[T]) replace(list []T, rv string) error {
	keys, deltas, err := c.prepareList(c.listDeltaType(), list)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg.known != nil {
		c.waitIdleLocked() // the deletions read the known objects
	}
	if c.closed && c.cfg.rejectClosed {
		return c.cfg.closedErr
	}
	c.paging = paging[T]{} // a whole list supersedes one in pages
	switch {
	case c.cfg.listMarks:
		// One list, begun and ended at once: the pages path does it, but
		// in order mode the deletions go first, as client-go's RealFIFO
		// queues them.
		c.beginPagesLocked()
		if c.q.deletionsFirst() && !c.cfg.positions {
			for _, key := range keys {
				c.paging.seenLocked(key)
			}
			c.queueUnseenDeletionsLocked()
		}
		c.replacePageLocked(keys, deltas, false)
		c.replaceEndLocked(rv)
	default:
		c.q.replace(keys, deltas, c.cfg.known, c.lookupForDeletion)
		if !c.populated {
			// Every queued element is now of the initial list: listed,
			// or deleted by it.
			c.populated = true
			c.initialCount = c.q.len()
			c.checkSyncedLocked()
		}
	}
	c.changedLocked()
	return nil
}

// resync queues a Sync for every known object with nothing queued. Without
// a known store it does nothing.
func (c *core[T]) resync() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg.known != nil {
		c.waitIdleLocked() // resync reads the known objects
	}
	if c.closed && c.cfg.rejectClosed {
		return c.cfg.closedErr
	}
	if c.cfg.known == nil {
		return nil
	}
	c.q.resync(c.cfg.known, c.lookupForSync)
	c.changedLocked()
	return nil
}
