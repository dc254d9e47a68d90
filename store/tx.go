package store

import "github.com/listwatch/listwatch/internal/nilcheck"

// Tx is a write transaction: the changes a [Store.Write] callback makes
// through it happen under one hold of the store's write lock, so readers
// see all of them or none, and a batch of N writes waits for readers once
// rather than N times. A Tx is valid only inside its callback.
type Tx[T Object] struct {
	// c is the store's engine; its write lock is held while the callback
	// runs. nil once the callback has returned.
	c *core[T]
}

// Write calls fn with a transaction on the store and returns once fn has
// returned. fn must not call the store's other methods (they take the
// lock Write already holds) nor keep tx. A panic in fn releases the lock
// and goes on; the writes made before it stay.
func (s *Store[T]) Write(fn func(tx *Tx[T])) {
	c := s.r.c
	tx := &Tx[T]{c: c}
	c.mu.Lock()
	defer func() {
		tx.c = nil
		c.unlock()
	}()
	fn(tx)
}

// Get returns the object stored under key.
func (tx *Tx[T]) Get(key string) (obj T, ok bool) {
	if e := tx.live().items.get(key); e != nil {
		return e.obj, true
	}
	return obj, false
}

// Swap stores obj under key, which must be obj's key under the store's
// key function (see [Store.SwapKeyed]), and returns the object it
// replaced. It fails, changing nothing, on a nil object, an empty key
// (unless [Options.NamelessKeys]) or an index function error. The store's resource version is left alone:
// set it once for the transaction with SetResourceVersion.
func (tx *Tx[T]) Swap(key string, obj T) (old T, existed bool, err error) {
	c := tx.live()
	if nilcheck.Is(obj) {
		return old, false, ErrNilObject
	}
	if key == "" && !c.namelessKeys {
		return old, false, ErrNoName
	}
	return c.upsertLocked(key, obj)
}

// Delete removes the object stored under key and returns it.
func (tx *Tx[T]) Delete(key string) (old T, existed bool) {
	return tx.live().removeLocked(key)
}

// SetResourceVersion records rv as the store's resource version.
func (tx *Tx[T]) SetResourceVersion(rv string) { tx.live().rv = rv }

// Replacing says whether a replace session is open ([Tx.BeginReplace] or
// [Store.BeginReplace] not yet ended).
func (tx *Tx[T]) Replacing() bool { return tx.live().session != 0 }

// BeginReplace opens a replace session from inside a transaction, for a
// writer that receives a list in pieces and applies each piece in its own
// transaction (the informer applies a relist this way): every object
// written or kept from now on, in this transaction and later ones, counts
// as listed, and [Tx.EndReplace] deletes the rest. It closes any open
// session, including one opened by [Store.BeginReplace].
func (tx *Tx[T]) BeginReplace() { tx.live().beginLocked() }

// Keep counts the object under key as listed in the open session without
// writing it: the list had it unchanged. It does nothing when no object is
// stored under key.
func (tx *Tx[T]) Keep(key string) {
	c := tx.live()
	if e := c.items.get(key); e != nil {
		e.mark = c.gen
	}
}

// EndReplace closes the session opened by the last [Tx.BeginReplace] (or
// [Store.BeginReplace]), deleting every object neither written nor kept
// since, and calls deleted (if not nil) with each one's key and last
// state, before it is removed. It returns how many it deleted; without an
// open session it deletes nothing and returns false. The resource version
// is left alone, as for every Tx write.
func (tx *Tx[T]) EndReplace(deleted func(key string, old T)) (n int, ok bool) {
	c := tx.live()
	if c.session == 0 {
		return 0, false
	}
	n = c.sweepLocked(c.session, deleted)
	c.session = 0
	return n, true
}

// live returns the engine, or panics when tx is used after its callback.
func (tx *Tx[T]) live() *core[T] {
	if tx.c == nil {
		panic("store: Tx used after its Write callback returned")
	}
	return tx.c
}
