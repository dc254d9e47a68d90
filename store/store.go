package store

import (
	"fmt"
	"sort"

	"github.com/listwatch/listwatch/internal/nilcheck"
)

// NamespaceIndex is the name of the built-in index every Store[T] has: it
// files each object under its namespace ("" for cluster-scoped objects).
// It has the same name as client-go's cache.NamespaceIndex.
const NamespaceIndex = "namespace"

// IndexFunc returns the values under which obj is filed in an index. It must
// be deterministic (the store recomputes it on the stored object to unfile
// it) and must not modify obj. Returning no values leaves obj out of the
// index; an error rejects the write that asked for it.
type IndexFunc[T any] func(obj T) ([]string, error)

// Indexers names index functions.
type Indexers[T any] map[string]IndexFunc[T]

// ValueIndexFunc is the single-valued form of IndexFunc: it returns obj's
// one index value, or ok == false to leave obj out of the index. The store
// evaluates it without allocating, so prefer it for indexes such as a node
// name or an owner. The same rules as for IndexFunc apply.
type ValueIndexFunc[T any] func(obj T) (value string, ok bool)

// ValueIndexers names single-valued index functions.
type ValueIndexers[T any] map[string]ValueIndexFunc[T]

// Options configures New. The zero value is valid.
type Options[T Object] struct {
	// KeyFunc computes store keys; nil means NamespacedKey, or
	// MetaNamespaceKey with NamelessKeys.
	KeyFunc KeyFunc[T]
	// NamelessKeys keys objects without a name as client-go does
	// ([MetaNamespaceKey]: "namespace/", or "" for a cluster-scoped one)
	// instead of refusing them with ErrNoName, and makes "" a valid key
	// (a key function may return it). The client-go drop-ins set it:
	// client-go's fake clientset creates objects named by generateName
	// without a name. With a KeyFunc of its own the store keys with that
	// and only accepts "" from it.
	NamelessKeys bool
	// Indexers are added at construction, next to the built-in
	// NamespaceIndex. More can be added later with Store.AddIndexers.
	Indexers Indexers[T]
	// ValueIndexers are single-valued indexers added at construction;
	// their names must differ from those in Indexers.
	ValueIndexers ValueIndexers[T]
}

// Store is the writer side of a typed, indexed, thread-safe object store.
// Hand Reader() to everything that only reads. The writer can read too:
// ListKeys and GetByKey let a DeltaFIFO use the store as its known objects.
// One component (the informer) should own the Store; its methods are
// nevertheless safe to call concurrently.
type Store[T Object] struct {
	// r is the read view sharing this store's core; it is immutable.
	r Reader[T]
}

// New returns an empty store with the built-in NamespaceIndex and the
// indexers in opts. It fails on an indexer with an empty name, a nil
// function, or the reserved name NamespaceIndex.
func New[T Object](opts Options[T]) (*Store[T], error) {
	keyFunc := opts.KeyFunc
	switch {
	case keyFunc != nil:
	case opts.NamelessKeys:
		keyFunc = MetaNamespaceKey[T]
	default:
		keyFunc = NamespacedKey[T]
	}
	c := newCore[T]()
	c.namelessKeys = opts.NamelessKeys
	c.indexes = append(c.indexes, newIndex(NamespaceIndex, namespaceValues[T]))
	c.indexes[0].snaps = &c.snaps
	c.indexes[0].fromKey = opts.KeyFunc == nil
	s := &Store[T]{r: Reader[T]{c: c, keyFunc: keyFunc, defaultKey: opts.KeyFunc == nil}}
	if err := s.AddIndexers(opts.Indexers); err != nil {
		return nil, err
	}
	if err := s.AddValueIndexers(opts.ValueIndexers); err != nil {
		return nil, err
	}
	return s, nil
}

// namespaceValues is the built-in namespace index: one value, appended into
// the caller's buffer, so it does not allocate.
func namespaceValues[T Object](dst []string, obj T) ([]string, error) {
	return append(dst, obj.GetNamespace()), nil
}

// sortedNames returns the keys of m in order, so that errors are
// deterministic.
func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func invalidIndexer(name string, nilFunc bool) error {
	return fmt.Errorf("%w: name %q (nil function: %t)", ErrInvalidIndexer, name, nilFunc)
}

// AddIndexers adds indexes at any time, filing every stored object in them.
// It fails, changing nothing, on a name that is taken or invalid, or when an
// index function fails on a stored object.
func (s *Store[T]) AddIndexers(indexers Indexers[T]) error {
	add := make([]*index[T], 0, len(indexers))
	for _, name := range sortedNames(indexers) {
		fn := indexers[name]
		if name == "" || fn == nil {
			return invalidIndexer(name, fn == nil)
		}
		add = append(add, newIndex(name, func(_ []string, obj T) ([]string, error) { return fn(obj) }))
	}
	return s.r.c.addIndexes(add)
}

// AddValueIndexers is AddIndexers for single-valued index functions.
func (s *Store[T]) AddValueIndexers(indexers ValueIndexers[T]) error {
	add := make([]*index[T], 0, len(indexers))
	for _, name := range sortedNames(indexers) {
		fn := indexers[name]
		if name == "" || fn == nil {
			return invalidIndexer(name, fn == nil)
		}
		add = append(add, newIndex(name, func(dst []string, obj T) ([]string, error) {
			if v, ok := fn(obj); ok {
				return append(dst, v), nil
			}
			return dst, nil
		}))
	}
	return s.r.c.addIndexes(add)
}

// key computes obj's key, refusing nil objects before the key function sees
// them.
func (s *Store[T]) key(obj T) (string, error) {
	if nilcheck.Is(obj) {
		return "", ErrNilObject
	}
	return s.r.keyFunc(obj)
}

// Upsert stores obj, replacing any object with the same key, and records
// obj's resource version as the store's. It fails, changing nothing, when
// obj has no key or an index function fails on it.
func (s *Store[T]) Upsert(obj T) error {
	_, _, err := s.Swap(obj)
	return err
}

// Add is Upsert, named for add events.
func (s *Store[T]) Add(obj T) error { return s.Upsert(obj) }

// Update is Upsert, named for update events.
func (s *Store[T]) Update(obj T) error { return s.Upsert(obj) }

// Swap is Upsert that also returns the object it replaced, so an informer
// can emit an update event without a second lookup.
func (s *Store[T]) Swap(obj T) (old T, replaced bool, err error) {
	key, err := s.key(obj)
	if err != nil {
		return old, false, err
	}
	return s.r.c.upsert(key, obj, obj.GetResourceVersion(), true)
}

// SwapKeyed is Swap for a caller that already computed obj's key with the
// store's key function (a DeltaFIFO has it), saving the key's allocation.
// Passing any other key corrupts lookups by object; an empty key is refused.
func (s *Store[T]) SwapKeyed(key string, obj T) (old T, replaced bool, err error) {
	if nilcheck.Is(obj) {
		return old, false, ErrNilObject
	}
	if key == "" && !s.r.c.namelessKeys {
		return old, false, ErrNoName
	}
	return s.r.c.upsert(key, obj, obj.GetResourceVersion(), true)
}

// Delete removes the object with obj's key, if any, and records obj's
// resource version as the store's.
func (s *Store[T]) Delete(obj T) error {
	key, err := s.key(obj)
	if err != nil {
		return err
	}
	s.r.c.remove(key, obj.GetResourceVersion(), true)
	return nil
}

// DeleteByKey removes the object stored under key and returns it.
func (s *Store[T]) DeleteByKey(key string) (old T, existed bool) {
	return s.r.c.remove(key, "", false)
}

// Bookmark records rv as the store's resource version.
func (s *Store[T]) Bookmark(rv string) { s.r.c.bookmark(rv) }

// Reader returns a read-only view of the store. Readers are small values:
// copy them freely.
func (s *Store[T]) Reader() Reader[T] { return s.r }

// GetByKey returns the object stored under key.
func (s *Store[T]) GetByKey(key string) (obj T, exists bool) { return s.r.GetByKey(key) }

// ListKeys returns every key, in no particular order.
func (s *Store[T]) ListKeys() []string { return s.r.ListKeys() }
