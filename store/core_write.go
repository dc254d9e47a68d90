package store

import (
	"fmt"
)

// upsert stores obj under key. When setRV is true, rv becomes the store's
// resource version. It returns the previous object, if any.
func (c *core[T]) upsert(key string, obj T, rv string, setRV bool) (old T, existed bool, err error) {
	c.mu.Lock()
	defer c.unlock()
	old, existed, err = c.upsertLocked(key, obj)
	if err == nil && setRV {
		c.rv = rv
	}
	return old, existed, err
}

// upsertLocked stores obj under key and marks it with the current
// generation. Every index value is computed before anything changes, so an
// index function error leaves the store as it was.
func (c *core[T]) upsertLocked(key string, obj T) (old T, existed bool, err error) {
	for _, ix := range c.indexes {
		if err := ix.computeNew(key, obj); err != nil {
			return old, false, err
		}
	}
	slot := c.items.find(key)
	if slot < 0 {
		e := &entry[T]{key: key, obj: obj, mark: c.gen}
		c.items.insert(e) // sets e.id, which the indexes' postings hash by
		for _, ix := range c.indexes {
			ix.insert(e, ix.newBuf)
		}
		return old, false, nil
	}
	e := c.items.slots[slot]
	for _, ix := range c.indexes {
		ix.move(e, e.obj)
	}
	old = e.obj
	c.items.setObj(slot, obj)
	e.mark = c.gen
	return old, true, nil
}

// remove deletes key. When setRV is true, rv becomes the store's resource
// version even if key was absent (client-go does the same).
func (c *core[T]) remove(key string, rv string, setRV bool) (old T, existed bool) {
	c.mu.Lock()
	defer c.unlock()
	old, existed = c.removeLocked(key)
	if setRV {
		c.rv = rv
	}
	return old, existed
}

func (c *core[T]) removeLocked(key string) (old T, existed bool) {
	e := c.items.remove(key)
	if e == nil {
		return old, false
	}
	c.unindexLocked(e)
	old = e.obj
	var zero T
	e.obj = zero
	return old, true
}

// unindexLocked takes e out of every index.
func (c *core[T]) unindexLocked(e *entry[T]) {
	for _, ix := range c.indexes {
		ix.remove(e, e.obj)
	}
}

// bookmark records rv without touching any object.
func (c *core[T]) bookmark(rv string) {
	c.mu.Lock()
	c.rv = rv
	c.mu.Unlock()
}

// addIndexes attaches new indexes and files every stored object in them.
// A name conflict or an index function error leaves the store unchanged.
func (c *core[T]) addIndexes(add []*index[T]) error {
	c.mu.Lock()
	defer c.unlock()
	seen := make(map[string]bool, len(add))
	for _, ix := range add {
		if c.indexLocked(ix.name) != nil || seen[ix.name] {
			return fmt.Errorf("%w: %q already exists", ErrIndexConflict, ix.name)
		}
		seen[ix.name] = true
	}
	for _, ix := range add {
		for e := range c.items.all {
			if err := ix.computeNew(e.key, e.obj); err != nil {
				return err
			}
			ix.insert(e, ix.newBuf)
		}
	}
	for _, ix := range add {
		ix.snaps = &c.snaps
	}
	c.indexes = append(c.indexes, add...)
	return nil
}

// op is one write of a batch: an upsert of obj under key, or a delete of
// key when del is true.
type op[T any] struct {
	key string
	obj T
	del bool
}

// apply runs ops in order in one critical section, so readers see all of
// them or none. errs[i] is the error of ops[i]; errs is nil when all
// succeeded. When setRV is true, rv becomes the store's resource version.
func (c *core[T]) apply(ops []op[T], rv string, setRV bool) (errs []error) {
	c.mu.Lock()
	defer c.unlock()
	for i, o := range ops {
		if o.del {
			c.removeLocked(o.key)
			continue
		}
		if _, _, err := c.upsertLocked(o.key, o.obj); err != nil {
			if errs == nil {
				errs = make([]error, len(ops))
			}
			errs[i] = err
		}
	}
	if setRV {
		c.rv = rv
	}
	return errs
}
