package cache

import (
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/internal/dropin"
	_ "github.com/listwatch/listwatch/store" // sets dropin.NewIndexer
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
func NewIndexer(keyFunc cache.KeyFunc, indexers cache.Indexers) cache.Indexer {
	return dropin.NewIndexer(keyFunc, indexers)
}

// NewStore is client-go's cache.NewStore: NewIndexer without indexes.
func NewStore(keyFunc cache.KeyFunc) cache.Store {
	return dropin.NewIndexer(keyFunc, cache.Indexers{})
}
