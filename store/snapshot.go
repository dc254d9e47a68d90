package store

import (
	"sync"
	"sync/atomic"
)

// Large index values are read without the lock, from snapshots.
//
// A reader that lists an index value holding at least snapshotMin objects
// copies them, under the read lock, into a private slice and publishes it
// (snapshots.m) while still holding the lock. Later readers of that value
// copy the published slice with no lock at all, so they never make a
// writer wait.
//
// A write that changes a member of such a value, or its membership, marks
// the value dirty (index.touch). When the write's critical section ends
// (core.unlock, once for a whole transaction), each dirty value that was
// read since its snapshot was published gets a new snapshot built by the
// writer; one nobody read has its snapshot withdrawn, and the next reader
// builds one. So a value that is read all the time is always served
// without a lock, and a writer never rebuilds more snapshots than were
// read. A reader sees the value as of some moment between its call and
// its return: before a write's critical section or after it, never a mix.
//
// Memory: one slice of references (8 bytes per object for pointer types)
// per large value that is read, until a write to it finds it unread.

// snapshotMin is the smallest index value that gets a snapshot: below it
// the read lock is held for a few dozen copies, which no writer notices.
// A variable only so that tests can snapshot every value.
var snapshotMin = 64

// snapKey names a snapshot: an index and one of its values.
type snapKey struct{ index, value string }

// snapshot is a published, immutable copy of an index value's objects.
type snapshot[T any] struct {
	objs []T
	// read is set by the first reader served from the snapshot.
	read atomic.Bool
}

// snapshots is a core's published snapshots and the values written since.
type snapshots[T any] struct {
	// m maps a snapKey to its *snapshot[T]. Stored by readers under the
	// read lock and by writers under the write lock; loaded with no lock.
	m sync.Map
	// dirty lists the snapshotted values touched by the write in progress,
	// each once (postings.dirty). Write lock only.
	dirty []dirtyValue[T]
}

// dirtyValue is a snapshotted index value touched by the write in progress.
type dirtyValue[T any] struct {
	ix *index[T]
	v  string
	p  *postings[T]
}

// snapState is a postings list's snapshot bookkeeping.
type snapState struct {
	// published is set while the value has a snapshot in snapshots.m.
	// Set by readers under the read lock, cleared under the write lock.
	published atomic.Bool
	// dirty is set while the value is in snapshots.dirty. Write lock only.
	dirty bool
}

// loadSnapshot returns the published snapshot of value in index name, and
// marks it read.
func (c *core[T]) loadSnapshot(name, value string) ([]T, bool) {
	v, ok := c.snaps.m.Load(snapKey{name, value})
	if !ok {
		return nil, false
	}
	s := v.(*snapshot[T])
	if !s.read.Load() {
		s.read.Store(true)
	}
	return s.objs, true
}

// wasRead reports whether the published snapshot of key has been read.
func (c *core[T]) wasRead(key snapKey) bool {
	v, ok := c.snaps.m.Load(key)
	return ok && v.(*snapshot[T]).read.Load()
}

// touch notes that a write is changing value v (postings p, which may be
// nil). Write lock held.
func (ix *index[T]) touch(v string, p *postings[T]) {
	if p != nil && p.snap.published.Load() && !p.snap.dirty {
		p.snap.dirty = true
		ix.snaps.dirty = append(ix.snaps.dirty, dirtyValue[T]{ix: ix, v: v, p: p})
	}
}

// publish stores objs as the snapshot of v. Read or write lock held, so
// no other write can slip in before it is visible.
func (ix *index[T]) publish(v string, p *postings[T], objs []T) {
	ix.snapshotted.Store(true)
	ix.snaps.m.Store(snapKey{ix.name, v}, &snapshot[T]{objs: objs})
	p.snap.published.Store(true)
}

// unlock settles the snapshots the write touched, then releases the write
// lock. Every write critical section ends with it.
func (c *core[T]) unlock() {
	for i, d := range c.snaps.dirty {
		d.p.snap.dirty = false
		key := snapKey{d.ix.name, d.v}
		if d.ix.values[d.v] == d.p && c.wasRead(key) {
			objs := make([]T, 0, d.p.len())
			for e := range d.p.all() {
				objs = append(objs, e.obj)
			}
			d.ix.publish(d.v, d.p, objs)
		} else {
			d.p.snap.published.Store(false)
			c.snaps.m.Delete(key)
		}
		c.snaps.dirty[i] = dirtyValue[T]{}
	}
	c.snaps.dirty = c.snaps.dirty[:0]
	c.mu.Unlock()
}

// appendFiltered appends the objects of src that keep accepts (all if
// keep is nil).
func appendFiltered[T any](dst, src []T, keep func(T) bool) []T {
	if keep == nil {
		return append(dst, src...)
	}
	for _, o := range src {
		if keep(o) {
			dst = append(dst, o)
		}
	}
	return dst
}
