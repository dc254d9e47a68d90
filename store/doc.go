// Package store is listwatch's typed, indexed, thread-safe object store: the
// cache an informer fills and controllers read.
//
// # Usage
//
// New returns the writer, a *Store[T]; its Reader method returns the
// read-only view to hand out (kube-rs style: one writer, many readers):
//
//	s, err := store.New(store.Options[*corev1.Pod]{
//		ValueIndexers: store.ValueIndexers[*corev1.Pod]{
//			"node": func(p *corev1.Pod) (string, bool) { return p.Spec.NodeName, p.Spec.NodeName != "" },
//		},
//		Indexers: store.Indexers[*corev1.Pod]{
//			"images": func(p *corev1.Pod) ([]string, error) { return containerImages(p), nil },
//		},
//	})
//	// the informer writes:
//	err = s.Upsert(pod)
//	err = s.Delete(pod)
//	err = s.Replace(pods, listRV)
//	// everyone else reads:
//	r := s.Reader()
//	pods := r.Namespace("default").List(labels.SelectorFromSet(labels.Set{"app": "web"}))
//	onNode, err := r.ByIndex("node", "node-1")
//
// Keys are "namespace/name", or "name" for cluster-scoped objects
// (NamespacedKey; MetaNamespaceKey with Options.NamelessKeys, which also
// keys objects without a name as client-go does); Options.KeyFunc
// replaces it. Every store has the
// built-in NamespaceIndex, which Reader.Namespace uses so that a
// namespace-scoped list costs the size of the namespace, not of the store.
// Indexes are named; an IndexFunc returns any number of values (client-go's
// shape), a ValueIndexFunc returns at most one and costs no allocation.
// More indexes can be added at any time with Store.AddIndexers and
// AddValueIndexers, also after the store is populated: stored objects are
// filed in them at once.
//
// Writes: Upsert (alias Add, Update), Swap (Upsert returning the replaced
// object), SwapKeyed (Swap with a precomputed key), Delete, DeleteByKey,
// Replace, BeginReplace, Bookmark, and [Store.Write], which runs a batch
// of them ([Tx.Swap], [Tx.Delete], [Tx.Get], [Tx.SetResourceVersion])
// under one hold of the write lock. Reads: Get, GetByKey, List,
// ListBySelector, ListKeys, Len, ByIndex, [Reader.ByIndexSeq] (ByIndex as
// an iterator that does not copy a large value), Index, IndexKeys,
// ListIndexValues, IndexNames, Stats, Namespace(ns).List, .ListSeq and
// .Get.
//
// Bad input does not panic. A nil object or one without a name has no key
// (ErrNilObject, ErrNoName; unless Options.NamelessKeys); an index function error rejects the write
// (ErrIndexFunc) and leaves the store unchanged; index queries on an
// unknown index fail with ErrUnknownIndex.
//
// # Replace without a second copy
//
// A relist replaces the whole content. client-go builds a new map of every
// listed object and swaps it in, so a relist briefly holds two full copies
// of the cache. Replace here works in place, by mark and sweep: every write
// marks its entry with the current replace generation; Replace starts a new
// generation, upserts each listed object and then deletes the entries left
// unmarked. Objects that did not change keep their entries and index
// postings. The only transient memory is one key string per listed item.
// Replace runs in one critical section, so readers see the old content or
// the new one, never a mix.
//
// BeginReplace opens the same operation incrementally, so that a reflector
// can apply list pages as they arrive and never hold the whole list:
// ReplaceSession.Upsert per object, then Commit(rv) sweeps, or Abort keeps
// everything written. The trade-off: until Commit, readers see a mix of
// new versions, old versions and objects the new list no longer has.
//
// # Memory and allocations
//
// Each object is one 32-byte entry (key, object, replace mark, hash id)
// that the key table and every index point at, so an update whose index
// values do not change rewrites the object pointer and touches no map. The
// key table is open addressing with one pointer and one tag byte per slot
// plus a dense mirror of the objects (so List copies contiguous memory);
// an index value with up to 8 objects keeps them in a slice, a larger one in
// an open-addressing pointer set (8 bytes a slot, where a Go map of
// pointers spends 16 and a control byte). BenchmarkMemory measures what
// the store costs per object with the namespace index and one more, key
// string included, against client-go's indexer; the figures are in
// docs/benchmarks/store-and-sharding.md ("Store micro-benchmarks"), and
// only there.
//
// A steady-state update allocates only what the key function and the index
// functions allocate: one key string with the default key function (none
// with SwapKeyed), nothing for the namespace index or a ValueIndexFunc, the
// returned slices of an IndexFunc.
//
// # Concurrency
//
// A Store and its Readers are safe for concurrent use. One sync.RWMutex
// guards the data; writes hold it for one object, or for one batch with
// [Store.Write] (Replace and Commit for the whole sweep). Reads size and
// allocate their result before taking the read lock and then only copy
// object references, so readers hold writers off briefly: a namespace
// list touches only the namespace's postings, and a full List copies runs
// of the dense object array in bulk.
//
// Large index values (64 objects or more: a big namespace, a busy node)
// are read with no lock at all: the first reader copies the value's
// objects into a snapshot and publishes it, later readers copy the
// snapshot, and a write that changes the value rebuilds the snapshot when
// its critical section ends, once per batch, if anyone read the old one
// (or withdraws it if nobody did). So the readers a controller runs all
// the time never make the writer wait, and each read still sees the value
// before a write or after it, never a mix. The price is one reference (8
// bytes) per object of each large value being read. The objects returned
// are the stored ones, shared, not copies: readers must not modify them.
//
// Index functions and key functions are called with the lock held and must
// not call back into the store. They must be deterministic: the store
// recomputes an object's values to unfile it.
//
// # client-go drop-in
//
// clientgo/tools/cache's NewIndexer and NewStore return a cache.Indexer
// (and cache.TransactionStore) with client-go's semantics on this engine,
// so client-go's generated listers work on it.
//
// # Testing
//
// The tests check every operation with table tests, and run seeded random
// operation sequences (upserts, deletes, Replace, incremental replaces,
// transactions and AddIndexers with several single- and multi-valued
// indexers), comparing every read after every step against a naive
// reference model written in the test with plain maps and linear scans,
// and against client-go's cache.NewIndexer; client-go's generated pod
// lister runs over both indexers. After every step the engines' internal
// invariants (table probe runs, postings shapes, index membership) are
// rechecked from scratch. The hash table and pointer set are also driven
// against Go maps over thousands of keys. Concurrent readers and writers
// run under -race. Benchmarks compare against client-go's indexer in the
// same run (BenchmarkX/listwatch versus BenchmarkX/client-go; see
// docs/store.md).
package store
