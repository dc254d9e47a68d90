package cache

import (
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/store"
)

// NewIndexer is client-go's cache.NewIndexer on listwatch's store engine,
// with client-go's semantics: Add and Update upsert and record the
// object's resource version; Delete records it even for an absent key; a
// key function error comes back as a cache.KeyError; Replace fails on the
// first key error without changing anything, and builds no second map of
// the list; indexers may be added after population, and a name conflict
// is an error; ByIndex, IndexKeys and Index of an unknown index are errors
// while ListIndexFuncValues returns an empty list; IndexKeys is sorted;
// Resync does nothing; LastStoreSyncResourceVersion returns the recorded
// resource version (client-go's behaviour with its default AtomicFIFO
// gate). It also implements cache.TransactionStore.
//
// Deliberate differences, all where client-go would panic: an index
// function error is returned by the write that triggered it (which then
// changes nothing) instead of panicking; a nil key function makes every
// keyed call fail with store.ErrNoKeyFunc; a nil index function yields no
// values.
//
// opts (client-go's StoreOptions: a transformer, informer metrics) act on
// client-go's own store internals, which listwatch's store does not have:
// with any, NewIndexer returns client-go's own indexer, so that they apply
// as they would (code that builds a store for itself rarely passes any;
// client-go's reflector and informers do).
func NewIndexer(keyFunc cache.KeyFunc, indexers cache.Indexers, opts ...cache.StoreOption) cache.Indexer {
	if len(opts) > 0 {
		return cache.NewIndexer(keyFunc, indexers, opts...)
	}
	return store.NewDropInIndexer(keyFunc, indexers)
}

// NewStore is client-go's cache.NewStore: NewIndexer without indexes (and
// client-go's own store when given StoreOptions, as NewIndexer).
func NewStore(keyFunc cache.KeyFunc, opts ...cache.StoreOption) cache.Store {
	if len(opts) > 0 {
		return cache.NewStore(keyFunc, opts...)
	}
	return store.NewDropInIndexer(keyFunc, cache.Indexers{})
}
