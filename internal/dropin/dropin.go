// Package dropin is the bridge between listwatch's engines and the
// client-go drop-ins under clientgo/: what a drop-in needs of an engine
// that the engine's public API does not offer, because only code written
// for client-go needs it. The drop-ins' public home is clientgo/ (one home
// per drop-in); the engines keep the few behaviours that must sit inside
// them and hand them over here:
//
//   - package informer honours [Quirks], a field of informer.Options that
//     only this module can fill;
//   - package store sets [NewIndexer] (client-go's cache.Indexer over any
//     value, on the store's engine) in an init function;
//   - package deltafifo sets [NewDeltaFIFO] (client-go's DeltaFIFO on the
//     FIFO's engine) in an init function.
//
// Nothing here is for users: code outside this module cannot import it.
package dropin

import (
	"context"

	"k8s.io/client-go/tools/cache"
)

// Quirks are client-go behaviours of the drop-in shared informer that a
// typed informer does not have (informer.Options.Quirks).
type Quirks[T any] struct {
	// SyncingHandlers: handlers start out "due for resync", and without a
	// default resync period stay so, which makes a relist hand every
	// unchanged object to every handler as an update (client-go's
	// syncingListeners). With a period, each resync check sets it to
	// whether the handler was due.
	SyncingHandlers bool
	// OnPanic, when set, is handed every handler panic instead of the
	// listener's own log line (client-go's utilruntime.PanicHandlers).
	OnPanic func(ctx context.Context, r any)
	// Check, when set, runs on every object before the Transform; an error
	// drops the object as reflector.ReasonUnexpectedType (the drop-in's
	// type check against its example object).
	Check func(T) error
	// Store, when set, is handed the informer's *store.Store[T] when it
	// is built: the drop-in's cache.Indexer reads and writes through it.
	// (An any, as this package is below package store.)
	Store func(st any)
}

// NewIndexer is client-go's cache.NewIndexer on the store's engine; set by
// package store.
var NewIndexer func(keyFunc cache.KeyFunc, indexers cache.Indexers) cache.Indexer

// DeltaFIFO is what client-go's *cache.DeltaFIFO offers, on the FIFO's
// engine: the methods clientgo/tools/cache's DeltaFIFO forwards to.
type DeltaFIFO interface {
	cache.QueueWithBatch
	cache.TransformingStore
	Name() string
	Done() <-chan struct{}
	KeyOf(obj any) (string, error)
	IsClosed() bool
}

// NewDeltaFIFO is client-go's cache.NewDeltaFIFOWithOptions on the FIFO's
// engine; set by package deltafifo.
var NewDeltaFIFO func(opts cache.DeltaFIFOOptions) DeltaFIFO
