package store

import (
	"fmt"
	"slices"
)

// Reads hold the read lock only while copying object references (8 or 16
// bytes each), never while calling back into user code other than index
// functions and filters given to the read itself.

func unknownIndex(name string) error {
	return fmt.Errorf("%w: %q", ErrUnknownIndex, name)
}

func (c *core[T]) get(key string) (obj T, ok bool) {
	c.mu.RLock()
	e := c.items.get(key)
	if e != nil {
		obj, ok = e.obj, true
	}
	c.mu.RUnlock()
	return obj, ok
}

// getBytes is get for a key in a byte slice, without allocating.
func (c *core[T]) getBytes(key []byte) (obj T, ok bool) {
	c.mu.RLock()
	e := c.items.getBytes(key)
	if e != nil {
		obj, ok = e.obj, true
	}
	c.mu.RUnlock()
	return obj, ok
}

func (c *core[T]) length() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.items.count
}

func (c *core[T]) resourceVersion() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rv
}

// appendAll appends every object that keep accepts (all if keep is nil).
// The result is allocated before taking the lock, so that allocation (and
// the GC assist it may trigger) does not hold writers off; without a
// filter, runs of full slots are copied in bulk from the dense objs array.
// listAny returns every object as an any, converted while copied.
func (c *core[T]) listAny() []any {
	out := make([]any, 0, c.length())
	c.mu.RLock()
	defer c.mu.RUnlock()
	slots, objs := c.items.slots, c.items.objs
	for i, e := range slots {
		if e != nil {
			out = append(out, objs[i])
		}
	}
	return out
}

func (c *core[T]) appendAll(dst []T, keep func(T) bool) []T {
	if dst == nil && keep == nil {
		dst = make([]T, 0, c.length())
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	slots, objs := c.items.slots, c.items.objs
	if keep != nil {
		for i, e := range slots {
			if e != nil && keep(objs[i]) {
				dst = append(dst, objs[i])
			}
		}
		return dst
	}
	for i := 0; i < len(slots); {
		if slots[i] == nil {
			i++
			continue
		}
		j := i + 1
		for j < len(slots) && slots[j] != nil {
			j++
		}
		dst = append(dst, objs[i:j]...)
		i = j
	}
	return dst
}

func (c *core[T]) listKeys() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	keys := make([]string, 0, c.items.count)
	for e := range c.items.all {
		keys = append(keys, e.key)
	}
	return keys
}

// appendIndexed appends the objects filed under value in index name that
// keep accepts (all if keep is nil). A large value is served from its
// published snapshot without any lock, or, when it has none, copied into
// a new snapshot under the read lock and published (snapshot.go). Like
// appendAll, it allocates outside the lock.
func (c *core[T]) appendIndexed(dst []T, name, value string, keep func(T) bool) ([]T, error) {
	snap, dst, err := c.readIndexed(dst, name, value, keep)
	if snap == nil {
		return dst, err
	}
	if dst == nil {
		dst = make([]T, 0, resultCap(len(snap), keep))
	}
	return appendFiltered(dst, snap, keep), nil
}

// readIndexed reads the objects filed under value in index name, as
// appendIndexed's first step. A large value comes back as its published
// snapshot (building and publishing one under the read lock if it has
// none), which the caller must not modify, with dst untouched; a small one
// (or one that grew past the room made for its snapshot meanwhile) is
// appended to dst, filtered by keep, with snap nil. The slice for a small
// value or a new snapshot is allocated before the lock is taken (only a
// value that outgrew its snapshot's room, a rare race, grows dst under it).
func (c *core[T]) readIndexed(dst []T, name, value string, keep func(T) bool) (snap, out []T, err error) {
	if snap, ok := c.loadSnapshot(name, value); ok {
		return snap, dst, nil
	}
	n := c.indexedLen(name, value)
	if n >= snapshotMin {
		snap = make([]T, 0, n+n/8)
	} else if dst == nil {
		dst = make([]T, 0, resultCap(n, keep))
	}
	c.mu.RLock()
	ix := c.indexLocked(name)
	if ix == nil {
		c.mu.RUnlock()
		return nil, dst, unknownIndex(name)
	}
	p := ix.values[value]
	if p == nil {
		c.mu.RUnlock()
		return nil, dst, nil
	}
	if snap == nil || p.len() > cap(snap) {
		// Small, or grown past the room made for it: copy straight out.
		for e := range p.all() {
			if keep == nil || keep(e.obj) {
				dst = append(dst, e.obj)
			}
		}
		c.mu.RUnlock()
		return nil, dst, nil
	}
	for e := range p.all() {
		snap = append(snap, e.obj)
	}
	ix.publish(value, p, snap)
	c.mu.RUnlock()
	return snap, dst, nil
}

// resultCap is the capacity to give a result of at most n objects: all of
// them without a filter, none up front with one.
func resultCap[T any](n int, keep func(T) bool) int {
	if keep != nil {
		return 0
	}
	return n
}

// indexedLen returns how many objects are filed under value in index name
// (0 for an unknown index).
func (c *core[T]) indexedLen(name, value string) int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if ix := c.indexLocked(name); ix != nil {
		if p := ix.values[value]; p != nil {
			return p.len()
		}
	}
	return 0
}

// indexKeys returns the sorted keys filed under value in index name.
func (c *core[T]) indexKeys(name, value string) ([]string, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ix := c.indexLocked(name)
	if ix == nil {
		return nil, unknownIndex(name)
	}
	p := ix.values[value]
	if p == nil {
		return []string{}, nil
	}
	keys := make([]string, 0, p.len())
	for e := range p.all() {
		keys = append(keys, e.key)
	}
	slices.Sort(keys)
	return keys, nil
}

// indexValues returns every value of index name, unsorted.
func (c *core[T]) indexValues(name string) ([]string, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ix := c.indexLocked(name)
	if ix == nil {
		return []string{}, unknownIndex(name)
	}
	vals := make([]string, 0, len(ix.values))
	for v := range ix.values {
		vals = append(vals, v)
	}
	return vals, nil
}

// matching returns the objects that share at least one value of index name
// with obj, each once.
func (c *core[T]) matching(name string, obj T) ([]T, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ix := c.indexLocked(name)
	if ix == nil {
		return nil, unknownIndex(name)
	}
	vals, err := ix.fn(nil, obj)
	if err != nil {
		return nil, fmt.Errorf("%w: index %q: %w", ErrIndexFunc, name, err)
	}
	if len(vals) == 1 {
		out := []T{}
		if p := ix.values[vals[0]]; p != nil {
			out = make([]T, 0, p.len())
			for e := range p.all() {
				out = append(out, e.obj)
			}
		}
		return out, nil
	}
	return ix.union(vals), nil
}

// union returns the objects filed under any of vals, each once.
func (ix *index[T]) union(vals []string) []T {
	seen := make(map[*entry[T]]struct{})
	out := []T{}
	for _, v := range vals {
		p := ix.values[v]
		if p == nil {
			continue
		}
		for e := range p.all() {
			if _, dup := seen[e]; !dup {
				seen[e] = struct{}{}
				out = append(out, e.obj)
			}
		}
	}
	return out
}

// indexNames returns the index names in the order they were added.
func (c *core[T]) indexNames() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	names := make([]string, len(c.indexes))
	for i, ix := range c.indexes {
		names[i] = ix.name
	}
	return names
}
