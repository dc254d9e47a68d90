package store

import "errors"

// Replace is mark-and-sweep in place: each replace gets a new generation,
// every object written in it is marked with that generation, and the sweep
// deletes the entries that were not. The store never holds a second map of
// the listed objects, unlike client-go, which builds one and swaps it in.

// beginLocked opens a new generation, closing any open session.
func (c *core[T]) beginLocked() uint32 {
	c.gen++
	if c.gen == 0 {
		// After 2^32 sessions: clear old marks so none can equal a reused
		// generation, then start again at 1.
		for e := range c.items.all {
			e.mark = 0
		}
		c.gen = 1
	}
	c.session = c.gen
	return c.gen
}

// begin opens a replace session and returns its generation.
func (c *core[T]) begin() uint32 {
	c.mu.Lock()
	defer c.unlock()
	return c.beginLocked()
}

// sessionUpsert writes obj under key as part of session gen.
func (c *core[T]) sessionUpsert(gen uint32, key string, obj T) error {
	c.mu.Lock()
	defer c.unlock()
	if c.session != gen {
		return ErrReplaceClosed
	}
	_, _, err := c.upsertLocked(key, obj)
	return err
}

// commit deletes every entry not written since session gen began, records
// rv and closes the session. It returns the number of entries deleted.
func (c *core[T]) commit(gen uint32, rv string) (int, error) {
	c.mu.Lock()
	defer c.unlock()
	if c.session != gen {
		return 0, ErrReplaceClosed
	}
	n := c.sweepLocked(gen, nil)
	c.session = 0
	c.rv = rv
	return n, nil
}

// abort closes session gen without deleting anything. Aborting a session
// that is already closed is a no-op.
func (c *core[T]) abort(gen uint32) {
	c.mu.Lock()
	defer c.unlock()
	if c.session == gen {
		c.session = 0
	}
}

// sweepLocked deletes the entries whose mark is not gen, calling deleted
// (if not nil) with each one's key and object before it goes.
func (c *core[T]) sweepLocked(gen uint32, deleted func(key string, old T)) int {
	n := 0
	c.items.sweep(func(e *entry[T]) bool {
		if e.mark == gen {
			return false
		}
		if deleted != nil {
			deleted(e.key, e.obj)
		}
		c.unindexLocked(e)
		var zero T
		e.obj = zero
		n++
		return true
	})
	return n
}

// replace makes objs (stored under the parallel keys) the whole content,
// atomically for readers. Objects an index function rejects are left out
// (and any older object under their key is deleted); their errors are
// joined into the result.
func (c *core[T]) replace(keys []string, objs []T, rv string) error {
	c.mu.Lock()
	defer c.unlock()
	gen := c.beginLocked()
	var errs []error
	for i, key := range keys {
		if _, _, err := c.upsertLocked(key, objs[i]); err != nil {
			errs = append(errs, err)
		}
	}
	c.sweepLocked(gen, nil)
	c.session = 0
	c.rv = rv
	return errors.Join(errs...)
}
