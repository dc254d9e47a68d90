package store

import (
	"iter"
	"slices"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/listwatch/internal/nilcheck"
)

// Reader is a read-only view of a Store. It is a small value: copy it
// freely and share it between goroutines. Every method is safe for
// concurrent use with each other and with the writer.
//
// The objects returned are the stored objects themselves, not copies: they
// must not be modified (DeepCopy first).
type Reader[T Object] struct {
	// c is the shared engine; never nil in a Reader obtained from a Store.
	c *core[T]
	// keyFunc is the store's key function; never nil.
	keyFunc KeyFunc[T]
	// defaultKey is true when keyFunc is NamespacedKey, which lets
	// Namespace(ns).Get build the key instead of scanning the namespace.
	defaultKey bool
}

// Get returns the stored object with obj's key.
func (r Reader[T]) Get(obj T) (item T, exists bool, err error) {
	if nilcheck.Is(obj) {
		return item, false, ErrNilObject
	}
	key, err := r.keyFunc(obj)
	if err != nil {
		return item, false, err
	}
	item, exists = r.c.get(key)
	return item, exists, nil
}

// GetByKey returns the object stored under key.
func (r Reader[T]) GetByKey(key string) (item T, exists bool) { return r.c.get(key) }

// List returns every stored object, in no particular order.
func (r Reader[T]) List() []T { return r.c.appendAll(nil, nil) }

// ListAny is [Reader.List] for an untyped caller (client-go's
// Store.List): the objects are converted while they are copied out.
func (r Reader[T]) ListAny() []any { return r.c.listAny() }

// ListBySelector returns the objects whose labels match sel; a nil selector
// matches everything.
func (r Reader[T]) ListBySelector(sel labels.Selector) []T {
	return r.c.appendAll(nil, labelFilter[T](sel))
}

// ListKeys returns every key, in no particular order.
func (r Reader[T]) ListKeys() []string { return r.c.listKeys() }

// Len returns the number of stored objects.
func (r Reader[T]) Len() int { return r.c.length() }

// LastSyncResourceVersion returns the resource version last recorded by a
// write, Replace, Commit or Bookmark ("" before any).
func (r Reader[T]) LastSyncResourceVersion() string { return r.c.resourceVersion() }

// ByIndex returns the objects filed under value in index name. An unknown
// index is an error wrapping ErrUnknownIndex.
func (r Reader[T]) ByIndex(name, value string) ([]T, error) {
	return r.c.appendIndexed(nil, name, value, nil)
}

// ByIndexAny is [Reader.ByIndex] for an untyped caller (client-go's
// Indexer.ByIndex, which returns []any): the objects are converted while
// they are copied out of the store, with no []T in between.
func (r Reader[T]) ByIndexAny(name, value string) ([]any, error) {
	snap, small, err := r.c.readIndexed(nil, name, value, nil)
	if err != nil {
		return nil, err
	}
	if snap == nil {
		snap = small
	}
	out := make([]any, len(snap))
	for i, o := range snap {
		out[i] = o
	}
	return out, nil
}

// ByIndexSeq is [Reader.ByIndex] as an iterator, for a caller that only
// ranges over the objects: a value holding many objects (64 or more) is
// read from the snapshot the store publishes for it, with no lock and no
// copy, so a read allocates a few dozen bytes however many objects it
// yields, where ByIndex allocates a slice of them all (80 KB for 10k
// pointers), which a reader in a loop turns into GC work. As with ByIndex,
// the objects are those of one moment during the call, however late the
// iteration runs (a smaller value is copied by the call). An unknown index
// is an error wrapping ErrUnknownIndex, returned with a nil iterator.
//
// The objects are shared with the cache, as ByIndex's are: read them, do
// not modify them.
func (r Reader[T]) ByIndexSeq(name, value string) (iter.Seq[T], error) {
	snap, small, err := r.c.readIndexed(nil, name, value, nil)
	if err != nil {
		return nil, err
	}
	if snap == nil {
		snap = small
	}
	return slices.Values(snap), nil
}

// Index returns the objects that share at least one value of index name
// with obj, each once.
func (r Reader[T]) Index(name string, obj T) ([]T, error) {
	if nilcheck.Is(obj) {
		return nil, ErrNilObject
	}
	return r.c.matching(name, obj)
}

// IndexKeys returns the keys filed under value in index name, sorted.
func (r Reader[T]) IndexKeys(name, value string) ([]string, error) {
	return r.c.indexKeys(name, value)
}

// ListIndexValues returns every value of index name that has objects,
// sorted.
func (r Reader[T]) ListIndexValues(name string) ([]string, error) {
	vals, err := r.c.indexValues(name)
	slices.Sort(vals)
	return vals, err
}

// IndexNames returns the names of the store's indexes, NamespaceIndex
// first, then in the order they were added.
func (r Reader[T]) IndexNames() []string { return r.c.indexNames() }

// labelFilter returns a filter for sel, or nil when sel matches everything.
func labelFilter[T Object](sel labels.Selector) func(T) bool {
	if sel == nil || sel.Empty() {
		return nil
	}
	return func(obj T) bool { return sel.Matches(labels.Set(obj.GetLabels())) }
}
