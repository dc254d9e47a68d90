package deltafifo

import (
	"context"
	"maps"
	"slices"
)

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

// paging is a list being queued a page at a time (FIFO.ReplacePage, then
// FIFO.ReplaceEnd). Nothing of the list itself is kept: only the keys that
// may have to be deleted when it ends.
type paging[T any] struct {
	// open is set by the first page and cleared by ReplaceEnd.
	open bool
	// initial: the list began before anything populated the FIFO, so it
	// is the initial list that HasSynced waits for.
	initial bool
	// unseen holds the keys queued or known when the list began that
	// neither a page nor a write has mentioned since; ReplaceEnd queues
	// their deletion. nil when there were none. Each queued key's value is
	// its last queued delta then, which (with list marks) gives the
	// deletion its object if the key has been popped since; a known key's
	// is the zero Delta.
	unseen map[string]Delta[T]
}

// seenLocked records that key was listed or written during an open list.
func (p *paging[T]) seenLocked(key string) {
	if p.unseen != nil {
		delete(p.unseen, key)
	}
}

// beginPagesLocked opens a paged list, abandoning an unfinished one: its
// pages are queued or already known, so they are candidates for deletion
// like everything else until the new list mentions them.
func (c *core[T]) beginPagesLocked() {
	p := &c.paging
	initial := !c.populated
	if p.open {
		initial = p.initial
	}
	if c.cfg.positions {
		// What is queued now is handed out before the list's ListBegin
		// and the consumer's sweep deletes what the list lacks: the FIFO
		// keeps no deletions of its own.
		*p = paging[T]{open: true, initial: initial}
		c.beginMarkedLocked(initial)
		return
	}
	var unseen map[string]Delta[T]
	add := func(key string, last Delta[T]) {
		if unseen == nil {
			unseen = make(map[string]Delta[T])
		}
		unseen[key] = last
	}
	c.q.scan(add) // a later call overwrites: the last delta stays
	if known := c.cfg.known; known != nil {
		for _, key := range known.ListKeys() {
			if _, queued := unseen[key]; !queued {
				add(key, Delta[T]{})
			}
		}
	}
	*p = paging[T]{open: true, initial: initial, unseen: unseen}
	if c.cfg.listMarks {
		c.beginMarkedLocked(initial)
	}
}

// replacePageLocked queues one page of a paged list: a delta of the
// list's type per object, no deletions. Keys of the initial list count
// towards HasSynced as they are queued.
func (c *core[T]) replacePageLocked(keys []string, deltas []Delta[T], first bool) {
	if first || !c.paging.open {
		c.beginPagesLocked()
	}
	p := &c.paging
	listed := 0
	c.q.reserve(len(keys))
	for i, key := range keys {
		p.seenLocked(key)
		if c.q.push(key, deltas[i]) {
			listed++
		}
	}
	if p.initial && !c.cfg.listMarks {
		c.initialCount += listed
	}
}

// replaceEndLocked completes a paged list: a final-state-unknown deletion
// for every key that was queued or known when it began and that nothing
// mentioned since. It ends the initial list if this was it; with list
// marks, it queues the ListEnd sentinel after the deletions instead.
func (c *core[T]) replaceEndLocked(rv string) {
	p := c.paging
	deletions := c.queueUnseenDeletionsLocked()
	c.paging = paging[T]{}
	if c.cfg.listMarks {
		c.pushEndLocked(rv)
		return
	}
	if p.initial && !c.syncedClosed {
		c.populated = true
		c.initialCount += deletions
		c.checkSyncedLocked()
	}
}

// queueUnseenDeletionsLocked queues the deletions of the open list's
// unseen keys, in key order, and forgets them. It returns how many it
// queued.
func (c *core[T]) queueUnseenDeletionsLocked() int {
	unseen := c.paging.unseen
	c.paging.unseen = nil
	if len(unseen) == 0 {
		return 0
	}
	return c.q.deleteUnlisted(slices.Sorted(maps.Keys(unseen)), func(key string) bool {
		return c.queueUnqueuedDeletionLocked(key, unseen[key])
	})
}

// queueUnqueuedDeletionLocked queues the final-state-unknown deletion of a
// key a paged list did not contain and that has nothing queued (a queued
// key's deletion is the queue's: deleteUnlisted), with its last known
// state. A key that is not known any more needs none; with list marks, a
// key popped since the list began gets one with the state it had then
// (atBegin), unless that was a deletion.
func (c *core[T]) queueUnqueuedDeletionLocked(key string, atBegin Delta[T]) bool {
	d := Delta[T]{Type: Deleted, FinalStateUnknown: true}
	if c.cfg.listMarks {
		if atBegin.Type == Deleted {
			return false
		}
		d.Object = atBegin.Object
		c.q.push(key, d)
		return true
	}
	if c.cfg.known == nil {
		return false
	}
	obj, exists, err := c.cfg.known.GetByKey(key)
	if err != nil || !exists {
		return false
	}
	d.Object = obj
	c.q.push(key, d)
	return true
}

// replacePage queues one page of a paged list. Like replace, it checks and
// transforms the whole page first: a bad object refuses the call and
// leaves the queue untouched.
func (c *core[T]) replacePage(list []T, first bool) error {
	keys, deltas, err := c.prepareList(c.listDeltaType(), list)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if (first || !c.paging.open) && c.cfg.known != nil {
		// A new list reads the known objects, which must not be behind a
		// batch being applied.
		c.waitIdleLocked()
	}
	if c.closed && c.cfg.rejectClosed {
		return c.cfg.closedErr
	}
	c.replacePageLocked(keys, deltas, first)
	c.changedLocked()
	return nil
}

// replaceEnd completes the paged list in progress; without one it is an
// empty list's end.
func (c *core[T]) replaceEnd(rv string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg.known != nil {
		c.waitIdleLocked() // the deletions read the known objects
	}
	if c.closed && c.cfg.rejectClosed {
		return c.cfg.closedErr
	}
	if !c.paging.open {
		c.beginPagesLocked()
	}
	c.replaceEndLocked(rv)
	c.changedLocked()
	return nil
}

// waitLen blocks until at most n keys (events) are queued or being
// processed (Len), the FIFO is closed, or ctx ends.
func (c *core[T]) waitLen(ctx context.Context, n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.depthLocked()+c.inflight <= n {
		return nil
	}
	stop := context.AfterFunc(ctx, c.wake)
	defer stop()
	c.drainWaiters++
	defer func() { c.drainWaiters-- }()
	for c.depthLocked()+c.inflight > n {
		if c.closed {
			return c.cfg.closedErr
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		c.cond.Wait()
	}
	return nil
}
