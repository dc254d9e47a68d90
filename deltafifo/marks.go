package deltafifo

// List marks (Options.ListMarks): a list travels through the queue as its
// objects between two boundaries, so that the consumer, which keeps its
// own store, applies it in batches and deletes what it lacks. The FIFO
// never reads the consumer's store:
//
//   - The ListBegin is not a position in the queue but a flag on the next
//     batch: an object queued before the list began and popped after it
//     is applied inside the consumer's session, so the consumer counts it
//     as listed unless the FIFO says otherwise.
//   - The FIFO says otherwise for every key it held when the list began
//     and that neither the list nor a write has mentioned since: at the
//     end it queues that key's final-state-unknown deletion, with the
//     key's last queued state (kept from the begin, in case the key has
//     been popped meanwhile).
//   - The ListEnd is a sentinel in queue order (a nil entry in coalescing
//     mode, an event with no delta type in order mode) that ends its
//     batch. Anything the consumer holds and has not written since the
//     ListBegin is then gone from the server.
//   - A list that begins while an earlier ListEnd is still queued makes
//     that sentinel void: its session would end before the new list's
//     objects queued after it were applied. The new list's begin opens a
//     fresh session at the next batch, which covers both.

// listEnd is one queued ListEnd sentinel's payload.
type listEnd struct {
	// rv is the list's resource version.
	rv string
	// void: a later list began while this one's end was still queued.
	void bool
}

// beginMarkedLocked records that a list has begun: the next batch opens
// with a ListBegin (with mark positions: a ListBegin sentinel is queued),
// ListEnd sentinels still queued are void, and the initial list holds
// HasSynced back until its end has been processed.
func (c *core[T]) beginMarkedLocked(initial bool) {
	if c.cfg.positions {
		c.q.pushBegin()
	} else {
		c.beginPending = true
	}
	for i := 0; i < c.ends.Len(); i++ {
		c.ends.At(i).void = true
	}
	if initial && !c.syncedClosed {
		c.initialCount = 1
	}
	c.populated = true
}

// pushEndLocked queues the ListEnd sentinel of the list at rv.
func (c *core[T]) pushEndLocked(rv string) {
	c.ends.Push(listEnd{rv: rv})
	c.q.pushEnd()
	c.progressedLocked(rv)
}

// takeEndLocked pops the ListEnd sentinel at the head of the queue and
// appends its item to the batch unless it is void. It reports whether it
// appended one.
func (c *core[T]) takeEndLocked() bool {
	c.q.popEnd()
	end := c.ends.Pop()
	if end.void {
		return false
	}
	c.batch = append(c.batch, Item[T]{List: ListEnd, ResourceVersion: end.rv})
	return true
}

// headMarkLocked reports which list-mark sentinel the oldest queued
// element is, NoMark for a key (an event). The queue must not be empty.
func (c *core[T]) headMarkLocked() ListMark {
	if !c.cfg.listMarks {
		return NoMark
	}
	return c.q.headMark()
}

// takeBeginLocked pops the ListBegin sentinel at the head of the queue
// (mark positions) and appends its item to the batch.
func (c *core[T]) takeBeginLocked() {
	c.q.popEnd()
	c.batch = append(c.batch, Item[T]{List: ListBegin})
}
