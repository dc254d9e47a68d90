// Package dropin holds [Quirks]: the client-go behaviours of the drop-in
// shared informer (clientgo/tools/cache) that package informer honours, a
// field of informer.Options that only this module can fill, as only code
// written for client-go needs them. (The other engines' drop-ins are
// exported by their packages: store.NewDropInIndexer and
// deltafifo.NewDropIn, whose public home is clientgo/tools/cache.)
//
// Nothing here is for users: code outside this module cannot import it.
package dropin

import "context"

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
