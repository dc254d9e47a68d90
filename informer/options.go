package informer

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/internal/dropin"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/store"
)

// Options configures New. Source is required; every other field has a
// working zero value.
type Options[T store.Object] struct {
	// Name labels logs. Default "informer".
	Name string
	// Source lists and watches the objects. Any client-go ListerWatcher works
	// through cache.ToListerWatcherWithContext or reflector.FromListerWatcher.
	Source cache.ListerWatcherWithContext
	// Reflector tunes the List-then-Watch engine: page size, streaming
	// lists, watch timeouts, the idle watchdog, backoff and metrics.
	Reflector reflector.Config[T]
	// KeyFunc keys objects. Default store.NamespacedKey, or
	// store.MetaNamespaceKey with NamelessKeys.
	KeyFunc store.KeyFunc[T]
	// NamelessKeys caches objects without a name under the key client-go
	// gives them ("namespace/", or ""; store.Options.NamelessKeys) instead
	// of dropping them as undecodable. An API server never sends such
	// objects; client-go's fake clientset does, for objects created with
	// generateName. The client-go drop-in informer sets it.
	NamelessKeys bool
	// Indexers are the store's indexes besides the built-in namespace index.
	// More can be added later with AddIndexers.
	Indexers store.Indexers[T]
	// ValueIndexers are single-valued indexes (one value per object, e.g. a
	// node name), which the store maintains without allocating.
	ValueIndexers store.ValueIndexers[T]
	// Transform is applied to every object before it is queued and stored,
	// e.g. StripManagedFields. It may modify the object in place. An object
	// for which it fails, or returns nil, is dropped: not cached (a list
	// still applies the rest; a relist then removes an older cached
	// version), handed to no handler, logged, counted (Informer.Dropped)
	// and reported by Informer.Status. A deletion it drops leaves the
	// cached object until the next list.
	Transform func(T) (T, error)
	// OrderedQueue makes the queue between the reflector and the store
	// deliver every event in arrival order (client-go's RealFIFO) instead
	// of coalescing per key (client-go's DeltaFIFO). It is independent of
	// how handlers are called (Delivery, DeliveryMode); it also lets the
	// cache's resource version move with every event
	// ([Informer.LastSyncResourceVersion]).
	OrderedQueue bool
	// AtomicRelists makes every list, the first and each relist, reach the
	// cache in one store transaction: readers see the old content or the
	// new, never a mix. The cost is memory: the whole new list is held
	// (pages are gathered) beside the cache until it is applied, so the
	// peak during a relist is about the cache's objects twice
	// (docs/benchmarks/relist-and-restart.md, "Relist peak memory"). The
	// default applies a list as its pages arrive, in batches: readers may
	// meanwhile see some objects in their new version and others not yet,
	// and objects the list lacks are deleted at its end; the peak stays
	// about one page above the cache.
	AtomicRelists bool
	// ResyncPeriod is the default resync period of handlers that do not set
	// their own. 0 disables resync. See HandlerOptions.ResyncPeriod.
	ResyncPeriod time.Duration
	// Delivery is the default DeliveryMode of handlers that do not set their own.
	Delivery DeliveryMode
	// WatchErrorHandler, when set, is called with every list or watch error,
	// in addition to the logging and metrics the reflector does.
	WatchErrorHandler func(ctx context.Context, err error)
	// FreshnessBound is how long a call of [Informer.Fresh] may wait for
	// the cache to reach the server's current resource version before the
	// informer is reported stale: Freshness.Stale in Informer.Freshness
	// and Snapshot, an error wrapping ErrStale in Status (unless the
	// reflector has one of its own), and the status page and metrics
	// built on them. A cache that Fresh finds beyond the server's
	// resource version is reported stale too. The next Fresh call that
	// succeeds clears it; nothing else does, so a controller that holds
	// disruptive actions while the informer is stale calls Fresh again
	// to resume them. Zero (or negative) never reports stale: Fresh then
	// only records how far behind the cache is (Freshness.BehindBy).
	FreshnessBound time.Duration
	// Clock drives resync timers and listener figures. Default the real clock.
	Clock clock.WithTicker
	// Processing, when set, is told how long each batch popped from the
	// queue took to apply to the cache and hand to the handlers (client-go's
	// informer_processing_latency_seconds). A factory sets it to its
	// metrics (factory.Factory.ObserveReflectors).
	Processing ProcessingObserver

	// Quirks are client-go behaviours for the drop-in shared informer
	// (clientgo/tools/cache), which alone can fill them; nil for every
	// other informer.
	Quirks *dropin.Quirks[T]
}

// ProcessingObserver is told how long each batch took to process (see
// Options.Processing). Both methods are called on the informer's processing
// goroutine, once per batch: they must be cheap and must not block.
type ProcessingObserver interface {
	// Observing reports whether processing times are wanted now; while it
	// is false the batch is not timed (no clock is read).
	Observing() bool
	// ObserveProcessing is given the time one batch took.
	ObserveProcessing(d time.Duration)
}

// HandlerOptions configures one handler registration.
type HandlerOptions struct {
	// ResyncPeriod is how often the handler is handed every cached object
	// again as an update from the object to itself. 0 takes the informer's
	// ResyncPeriod; negative disables resync for this handler. A resync
	// replays the cache; it does not contact the server (that is a relist,
	// which the reflector does only after a failure).
	ResyncPeriod time.Duration
	// Delivery overrides the informer's default DeliveryMode.
	Delivery *DeliveryMode
	// Logger receives handler panics. Default the informer's logger.
	Logger *logr.Logger
	// Name labels the handler in metrics and on the status page (see
	// informer/promprovider). Default: its index in registration order,
	// which shifts when an earlier handler is removed.
	Name string
}

// StripManagedFields is a ready Transform that drops metadata.managedFields,
// which controllers rarely read and which can be a fifth of a cached
// object's bytes.
func StripManagedFields[T store.Object](obj T) (T, error) {
	obj.SetManagedFields(nil)
	return obj, nil
}
