package cache

import (
	"fmt"
	"reflect"
	"sync"

	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/store"
)

// indexerView presents an informer's typed store as client-go's
// cache.Indexer, for code (listers, controller-runtime) written against
// SharedIndexInformer.GetIndexer. Reads go to the store's Reader; writes
// are accepted as client-go accepts them, though only the informer should
// write.
//
// It is the second cache.Indexer adapter over the store's engine; the
// first, store.NewIndexer (store/indexer.go), is not reused because it
// owns an engine of its own, while this one must answer for the store the
// informer writes. What the view does differently follows from that:
//   - keys: the informer's store key (store.MetaNamespaceKey) of a
//     store.Object, anything else refused, where NewIndexer runs the
//     caller's cache.KeyFunc on any value and wraps its errors in
//     cache.KeyError;
//   - Delete of a cache.DeletedFinalStateUnknown deletes its key, since the
//     store's key function cannot read a tombstone (NewIndexer leaves that
//     to the caller's key function, e.g. DeletionHandlingMetaNamespaceKeyFunc);
//   - the store always has the namespace index, so AddIndexers takes that
//     name only with client-go's MetaNamespaceIndexFunc, where NewIndexer has
//     no built-in index;
//   - it goes through the store's exported API (Upsert, Delete, Reader), so
//     ListIndexFuncValues is sorted, and it is no cache.TransactionStore.
//
// Everything else is a one-line translation between any and the store's
// calls, as in NewIndexer. One adapter for both would have to live in the
// store package, generic over the element type with the keying and the
// built-in index as parameters; docs/architecture.md ("Where each concept
// lives") lists that as the remaining step.
type indexerView struct {
	s *store.Store[store.Object]
	// mu serialises AddIndexers so that indexers names exactly the indexes
	// added through this view.
	mu       sync.Mutex
	indexers cache.Indexers
}

var _ cache.Indexer = (*indexerView)(nil)

func asObject(obj any) (store.Object, error) {
	o, ok := obj.(store.Object)
	if !ok {
		return nil, fmt.Errorf("informer: %T has no object metadata", obj)
	}
	return o, nil
}

func (c *indexerView) Add(obj any) error { return c.Update(obj) }

func (c *indexerView) Update(obj any) error {
	o, err := asObject(obj)
	if err != nil {
		return err
	}
	return c.s.Upsert(o)
}

func (c *indexerView) Delete(obj any) error {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		c.s.DeleteByKey(d.Key)
		return nil
	}
	o, err := asObject(obj)
	if err != nil {
		return err
	}
	return c.s.Delete(o)
}

func (c *indexerView) List() []any { return c.s.Reader().ListAny() }

func (c *indexerView) ListKeys() []string { return c.s.ListKeys() }

func (c *indexerView) Get(obj any) (any, bool, error) {
	o, err := asObject(obj)
	if err != nil {
		return nil, false, err
	}
	item, exists, err := c.s.Reader().Get(o)
	return item, exists, err
}

func (c *indexerView) GetByKey(key string) (any, bool, error) {
	item, exists := c.s.GetByKey(key)
	if !exists {
		return nil, false, nil
	}
	return item, true, nil
}

func (c *indexerView) Replace(list []any, rv string) error {
	items := make([]store.Object, len(list))
	for i, obj := range list {
		o, err := asObject(obj)
		if err != nil {
			return err
		}
		items[i] = o
	}
	return c.s.Replace(items, rv)
}

func (c *indexerView) Resync() error      { return nil }
func (c *indexerView) Bookmark(rv string) { c.s.Bookmark(rv) }
func (c *indexerView) LastStoreSyncResourceVersion() string {
	return c.s.Reader().LastSyncResourceVersion()
}

// Index returns the objects that share an indexed value with obj. Like
// client-go's indexer it runs the index function on whatever it is given:
// client-go's listers ask with a bare *metav1.ObjectMeta
// (cache.ListAllByNamespace), and refusing it sent every namespaced
// List of a generated lister to a scan of the whole cache and a log line.
func (c *indexerView) Index(name string, obj any) ([]any, error) {
	fn := c.indexFunc(name)
	o, isObject := obj.(store.Object)
	if fn == nil {
		if isObject { // an index of the store's own: it says whether there is one
			items, err := c.s.Reader().Index(name, o)
			return toAny(items), err
		}
		return nil, fmt.Errorf("Index with name %s does not exist", name)
	}
	values, err := fn(obj)
	if err != nil {
		return nil, err
	}
	if len(values) == 1 { // copied once, into the []any
		return c.ByIndex(name, values[0])
	}
	if isObject { // the union under one read lock
		items, err := c.s.Reader().Index(name, o)
		return toAny(items), err
	}
	seen := map[string]bool{}
	var out []any
	for _, v := range values {
		keys, err := c.s.Reader().IndexKeys(name, v)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if seen[k] {
				continue
			}
			seen[k] = true
			if o, ok := c.s.Reader().GetByKey(k); ok {
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// indexFunc is the client-go index function of the index name: the
// built-in namespace index's is client-go's MetaNamespaceIndexFunc.
func (c *indexerView) indexFunc(name string) cache.IndexFunc {
	if name == store.NamespaceIndex {
		return cache.MetaNamespaceIndexFunc
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.indexers[name]
}

func (c *indexerView) IndexKeys(name, value string) ([]string, error) {
	return c.s.Reader().IndexKeys(name, value)
}

func (c *indexerView) ListIndexFuncValues(name string) []string {
	vals, _ := c.s.Reader().ListIndexValues(name)
	return vals
}

func (c *indexerView) ByIndex(name, value string) ([]any, error) {
	return c.s.Reader().ByIndexAny(name, value)
}

func (c *indexerView) GetIndexers() cache.Indexers {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(cache.Indexers, len(c.indexers))
	for k, v := range c.indexers {
		out[k] = v
	}
	return out
}

// AddIndexers adds client-go index functions. The store always has the
// namespace index; an indexer of that name is accepted when it is
// client-go's own MetaNamespaceIndexFunc (as informer factories add) and
// refused otherwise, since it would silently be answered by the built-in.
func (c *indexerView) AddIndexers(indexers cache.Indexers) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	typed := store.Indexers[store.Object]{}
	for name, fn := range indexers {
		if _, dup := c.indexers[name]; dup {
			return fmt.Errorf("indexer conflict: %v", name)
		}
		if name == store.NamespaceIndex {
			if !sameFunc(fn, cache.MetaNamespaceIndexFunc) {
				return fmt.Errorf("informer: index %q is built in (by namespace); a custom function under that name is not supported", name)
			}
			continue
		}
		typed[name] = func(o store.Object) ([]string, error) { return fn(o) }
	}
	if err := c.s.AddIndexers(typed); err != nil {
		return err
	}
	if c.indexers == nil {
		c.indexers = cache.Indexers{}
	}
	for name, fn := range indexers {
		c.indexers[name] = fn
	}
	return nil
}

func sameFunc(a, b cache.IndexFunc) bool {
	return a != nil && reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer()
}

func toAny[T any](items []T) []any {
	out := make([]any, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out
}
