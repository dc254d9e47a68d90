package deltafifo

// replaceCoalescingLocked queues a Replace in coalescing mode: a delta of the
// list's type for every listed object, then a final-state-unknown deletion
// for every queued key and every known key the list lacks. keys and deltas
// come from prepareList and are valid.
func (c *core[T]) replaceCoalescingLocked(keys []string, deltas []Delta[T]) {
	q := &c.co
	q.reserve(len(keys))
	q.gen++
	listed := 0
	for i, key := range keys {
		e := q.entry(key)
		if e.gen != q.gen {
			e.gen = q.gen
			listed++
		}
		e.append(deltas[i])
	}
	deletions := 0
	for i := 0; i < q.order.len(); i++ {
		e := q.order.at(i).e
		if e.gen == q.gen {
			continue
		}
		last := e.deltas[len(e.deltas)-1].Object
		e.append(Delta[T]{Object: last, Type: Deleted, FinalStateUnknown: true})
		deletions++
	}
	if known := c.cfg.known; known != nil {
		for _, key := range known.ListKeys() {
			if _, queued := q.items[key]; queued {
				continue
			}
			q.add(key, Delta[T]{Object: c.lookupForDeletion(key), Type: Deleted, FinalStateUnknown: true})
			deletions++
		}
	}
	if !c.populated {
		c.populated = true
		c.initialCount = listed + deletions
		c.checkSyncedLocked()
	}
}

// lookupForDeletion returns the known object under key, or the zero T (with
// a log line) when the store fails or no longer has it.
func (c *core[T]) lookupForDeletion(key string) T {
	obj, exists, err := c.cfg.known.GetByKey(key)
	if err != nil {
		c.cfg.logger.Error(err, "Known objects lookup failed, queueing a deletion without an object", "key", key)
		var zero T
		return zero
	}
	if !exists {
		c.cfg.logger.Info("Key vanished from known objects, queueing a deletion without an object", "key", key)
		var zero T
		return zero
	}
	return obj
}

// resyncCoalescingLocked queues a Sync delta for every known object whose
// key is not queued already.
func (c *core[T]) resyncCoalescingLocked() {
	q := &c.co
	for _, key := range c.cfg.known.ListKeys() {
		if _, queued := q.items[key]; queued {
			continue
		}
		if obj, ok := c.lookupForSync(key); ok {
			q.add(key, Delta[T]{Object: obj, Type: Sync})
		}
	}
}

// lookupForSync returns the known object under key, logging why not if it
// cannot.
func (c *core[T]) lookupForSync(key string) (T, bool) {
	obj, exists, err := c.cfg.known.GetByKey(key)
	switch {
	case err != nil:
		c.cfg.logger.Error(err, "Known objects lookup failed, not queueing a resync", "key", key)
		return obj, false
	case !exists:
		c.cfg.logger.Info("Key vanished from known objects, not queueing a resync", "key", key)
		return obj, false
	}
	return obj, true
}
