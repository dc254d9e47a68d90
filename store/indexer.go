package store

import (
	"fmt"
	"maps"
	"reflect"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// NewDropInIndexer is client-go's cache.NewIndexer on the same engine as
// Store[T] (over any value, keyed by the caller's key function): the
// engine of clientgo/tools/cache's NewIndexer and NewStore, which are its
// public home, with client-go's names (see NewIndexer there for the
// semantics and the few deliberate differences, all where client-go would
// panic). Code written for client-go uses that package; NewDropInIndexer
// is exported only so that it can. Replace does not build a second map:
// see [Store.Replace].
func NewDropInIndexer(keyFunc cache.KeyFunc, indexers cache.Indexers) cache.Indexer {
	ci := &cacheIndexer{c: newCore[any](), keyFunc: keyFunc, indexers: cache.Indexers{}}
	// A fresh store has no objects, so adding can only fail on names,
	// and map keys are unique.
	_ = ci.AddIndexers(indexers)
	return ci
}

// cacheIndexer implements cache.Indexer on core[any].
type cacheIndexer struct {
	// c holds the objects and indexes.
	c *core[any]
	// keyFunc is the caller's key function; may be nil (see key).
	keyFunc cache.KeyFunc
	// indexersMu guards indexers and serialises AddIndexers, so that
	// indexers always names exactly the indexes of c.
	indexersMu sync.Mutex
	indexers   cache.Indexers
}

var (
	_ cache.Indexer          = (*cacheIndexer)(nil)
	_ cache.TransactionStore = (*cacheIndexer)(nil)
)

func (ci *cacheIndexer) key(obj any) (string, error) {
	if ci.keyFunc == nil {
		return "", cache.KeyError{Obj: obj, Err: ErrNoKeyFunc}
	}
	key, err := ci.keyFunc(obj)
	if err != nil {
		return "", cache.KeyError{Obj: obj, Err: err}
	}
	return key, nil
}

// resourceVersionOf returns obj's resource version, if it has metadata.
func resourceVersionOf(obj any) (string, bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	return m.GetResourceVersion(), true
}

func (ci *cacheIndexer) Add(obj any) error { return ci.Update(obj) }

func (ci *cacheIndexer) Update(obj any) error {
	key, err := ci.key(obj)
	if err != nil {
		return err
	}
	rv, ok := resourceVersionOf(obj)
	_, _, err = ci.c.upsert(key, obj, rv, ok)
	return err
}

func (ci *cacheIndexer) Delete(obj any) error {
	key, err := ci.key(obj)
	if err != nil {
		return err
	}
	rv, ok := resourceVersionOf(obj)
	ci.c.remove(key, rv, ok)
	return nil
}

func (ci *cacheIndexer) List() []any        { return ci.c.appendAll(nil, nil) }
func (ci *cacheIndexer) ListKeys() []string { return ci.c.listKeys() }

func (ci *cacheIndexer) LastStoreSyncResourceVersion() string { return ci.c.resourceVersion() }

func (ci *cacheIndexer) Bookmark(rv string) { ci.c.bookmark(rv) }

func (ci *cacheIndexer) Get(obj any) (item any, exists bool, err error) {
	key, err := ci.key(obj)
	if err != nil {
		return nil, false, err
	}
	return ci.GetByKey(key)
}

func (ci *cacheIndexer) GetByKey(key string) (item any, exists bool, err error) {
	item, exists = ci.c.get(key)
	return item, exists, nil
}

func (ci *cacheIndexer) Replace(list []any, rv string) error {
	keys := make([]string, len(list))
	for i, obj := range list {
		key, err := ci.key(obj)
		if err != nil {
			return err
		}
		keys[i] = key
	}
	return ci.c.replace(keys, list, rv)
}

func (ci *cacheIndexer) Resync() error { return nil }

func (ci *cacheIndexer) Index(indexName string, obj any) ([]any, error) {
	return ci.c.matching(indexName, obj)
}

func (ci *cacheIndexer) IndexKeys(indexName, indexedValue string) ([]string, error) {
	return ci.c.indexKeys(indexName, indexedValue)
}

func (ci *cacheIndexer) ListIndexFuncValues(indexName string) []string {
	vals, _ := ci.c.indexValues(indexName)
	return vals
}

func (ci *cacheIndexer) ByIndex(indexName, indexedValue string) ([]any, error) {
	return ci.c.appendIndexed(nil, indexName, indexedValue, nil)
}

// GetIndexers returns a copy of the indexers (client-go returns its own map).
func (ci *cacheIndexer) GetIndexers() cache.Indexers {
	ci.indexersMu.Lock()
	defer ci.indexersMu.Unlock()
	return maps.Clone(ci.indexers)
}

func (ci *cacheIndexer) AddIndexers(newIndexers cache.Indexers) error {
	ci.indexersMu.Lock()
	defer ci.indexersMu.Unlock()
	names := make([]string, 0, len(newIndexers))
	for name := range newIndexers {
		names = append(names, name)
	}
	sort.Strings(names)
	add := make([]*index[any], 0, len(names))
	for _, name := range names {
		add = append(add, newIndex(name, untypedValues(newIndexers[name])))
	}
	if err := ci.c.addIndexes(add); err != nil {
		return err
	}
	maps.Copy(ci.indexers, newIndexers)
	return nil
}

// untypedValues adapts a client-go index function; nil yields no values.
// client-go's MetaNamespaceIndexFunc, the index every informer factory
// adds, runs without its one-element slice per call: the same value and
// error, appended to the index's buffer (no allocation per write).
func untypedValues(fn cache.IndexFunc) valuesFunc[any] {
	switch {
	case fn == nil:
		return func(dst []string, _ any) ([]string, error) { return dst, nil }
	case reflect.ValueOf(fn).Pointer() == reflect.ValueOf(cache.MetaNamespaceIndexFunc).Pointer():
		return func(dst []string, obj any) ([]string, error) {
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, fmt.Errorf("object has no meta: %v", err) // client-go's words
			}
			return append(dst, m.GetNamespace()), nil
		}
	}
	return func(_ []string, obj any) ([]string, error) { return fn(obj) }
}

// Transaction applies txns atomically (readers see all or none), skipping
// those whose key or index values cannot be computed; they are reported in
// the error, the others in its SuccessfulIndices. An unknown transaction
// type is reported as an error (client-go silently ignores it). The resource version of
// the last transaction's object, when it has one, becomes the store's.
func (ci *cacheIndexer) Transaction(txns ...cache.Transaction) *cache.TransactionError {
	if len(txns) == 0 {
		return nil
	}
	ops := make([]op[any], 0, len(txns))
	idx := make([]int, 0, len(txns))
	var errs []error
	for i, t := range txns {
		switch t.Type {
		case cache.TransactionTypeAdd, cache.TransactionTypeUpdate, cache.TransactionTypeDelete:
		default:
			errs = append(errs, fmt.Errorf("transaction %d: unknown type %q", i, t.Type))
			continue
		}
		key, err := ci.key(t.Object)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ops = append(ops, op[any]{key: key, obj: t.Object, del: t.Type == cache.TransactionTypeDelete})
		idx = append(idx, i)
	}
	rv, ok := resourceVersionOf(txns[len(txns)-1].Object)
	opErrs := ci.c.apply(ops, rv, ok)
	if len(errs) == 0 && opErrs == nil {
		return nil
	}
	ok2 := make([]int, 0, len(idx))
	for j, i := range idx {
		if opErrs != nil && opErrs[j] != nil {
			errs = append(errs, fmt.Errorf("transaction %d: %w", i, opErrs[j]))
			continue
		}
		ok2 = append(ok2, i)
	}
	return &cache.TransactionError{SuccessfulIndices: ok2, TotalTransactions: len(txns), Errors: errs}
}
