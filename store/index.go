package store

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
)

// valuesFunc computes the index values of obj, appending them to dst (which
// it may also ignore and return a fresh slice). The built-in namespace index
// appends into a reused buffer and so costs no allocation.
type valuesFunc[T any] func(dst []string, obj T) ([]string, error)

// index is one named index.
//
// Invariants: values maps every value v to the non-empty set of entries e
// with v in fn(e.obj); no value maps to an empty set. newBuf and oldBuf are
// scratch space used only under core.mu held for writing.
type index[T any] struct {
	name   string
	fn     valuesFunc[T]
	values map[string]*postings[T]
	newBuf []string
	oldBuf []string
	// snaps is the owning core's snapshots (core.snaps); set when the
	// index is attached to a core.
	snaps *snapshots[T]
	// fromKey is set on the built-in namespace index of a store keyed by
	// NamespacedKey: an entry's namespace is the part of its key before
	// the '/' (none: cluster-scoped, ""), so the index never reads the
	// object, and an update, which keeps the key, never moves the entry.
	fromKey bool
	// snapshotted is set once any value of this index has had a snapshot
	// published, and never cleared: until then no write has a snapshot to
	// mark dirty, so an update that keeps an entry's values skips looking
	// them up.
	snapshotted atomic.Bool
}

func newIndex[T any](name string, fn valuesFunc[T]) *index[T] {
	return &index[T]{name: name, fn: fn, values: make(map[string]*postings[T])}
}

// indexFuncError wraps an index function failure with where it happened.
func indexFuncError(name, key string, err error) error {
	return fmt.Errorf("%w: index %q, key %q: %w", ErrIndexFunc, name, key, err)
}

// computeNew evaluates the index for obj into newBuf (write lock held).
func (ix *index[T]) computeNew(key string, obj T) error {
	if ix.fromKey {
		ix.newBuf = append(ix.newBuf[:0], namespaceOfKey(key))
		return nil
	}
	vals, err := ix.fn(ix.newBuf[:0], obj)
	if err != nil {
		return indexFuncError(ix.name, key, err)
	}
	ix.newBuf = vals
	return nil
}

// insert adds e, which is filed under none of vals, under each of them
// (once, however often a value repeats).
func (ix *index[T]) insert(e *entry[T], vals []string) {
	for i, v := range vals {
		if i > 0 && slices.Contains(vals[:i], v) {
			continue
		}
		p := ix.values[v]
		if p == nil {
			p = &postings[T]{}
			ix.values[v] = p
		}
		ix.touch(v, p)
		p.add(e)
	}
}

// removeValues removes e from under each of vals, dropping emptied values.
func (ix *index[T]) removeValues(e *entry[T], vals []string) {
	for _, v := range vals {
		p := ix.values[v]
		ix.touch(v, p)
		if p != nil && p.remove(e) {
			delete(ix.values, v)
		}
	}
}

// removeAnywhere removes e from every value. It is the slow path for an
// index function that fails on an object it accepted before, so the old
// values cannot be recomputed.
func (ix *index[T]) removeAnywhere(e *entry[T]) {
	for v, p := range ix.values {
		ix.touch(v, p)
		if p.remove(e) {
			delete(ix.values, v)
		}
	}
}

// remove takes e (currently holding old) out of the index.
func (ix *index[T]) remove(e *entry[T], old T) {
	if ix.fromKey {
		ix.oldBuf = append(ix.oldBuf[:0], namespaceOfKey(e.key))
		ix.removeValues(e, ix.oldBuf)
		return
	}
	vals, err := ix.fn(ix.oldBuf[:0], old)
	if err != nil {
		ix.removeAnywhere(e)
		return
	}
	ix.oldBuf = vals
	ix.removeValues(e, vals)
}

// move re-files e, which held old, under the values in newBuf. Unchanged
// values cost nothing beyond evaluating the function for old (nothing at
// all for a fromKey index), plus a lookup per value once the index has
// snapshots to mark stale.
func (ix *index[T]) move(e *entry[T], old T) {
	vals := ix.newBuf // fromKey: the key, and so the values, are the same
	if !ix.fromKey {
		var err error
		vals, err = ix.fn(ix.oldBuf[:0], old)
		if err != nil {
			ix.removeAnywhere(e)
			ix.insert(e, ix.newBuf)
			return
		}
		ix.oldBuf = vals
	}
	if slices.Equal(vals, ix.newBuf) {
		// Same values, new object: the members' snapshots are stale.
		if !ix.snapshotted.Load() {
			return
		}
		for _, v := range vals {
			ix.touch(v, ix.values[v])
		}
		return
	}
	ix.removeValues(e, vals)
	ix.insert(e, ix.newBuf)
}

// namespaceOfKey is the namespace in a key made by NamespacedKey.
func namespaceOfKey(key string) string {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		return key[:i]
	}
	return ""
}
