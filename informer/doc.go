// Package informer keeps a typed, indexed cache of one Kubernetes resource in
// step with the API server and tells registered handlers about every change.
//
// An Informer[T] wires three stages: a reflector (List-then-Watch, relists,
// backoff, watchdog) writes into a deltafifo queue; one goroutine pops each
// key's changes, applies them to a store.Store[T] and hands the resulting
// notifications to every handler's listener; each listener runs its handler
// on its own goroutine behind its own buffer.
//
// # Usage
//
//	inf, err := informer.New(informer.Options[*corev1.Pod]{
//		Source:    reflector.FromClient[*corev1.PodList](clientset.CoreV1().Pods("")),
//		Transform: informer.StripManagedFields[*corev1.Pod],
//	})
//	reg, err := inf.AddHandler(informer.HandlerFuncs[*corev1.Pod]{
//		AddFunc:    func(p *corev1.Pod, initial bool) { queue.Add(key(p)) },
//		UpdateFunc: func(old, new *corev1.Pod) { queue.Add(key(new)) },
//		DeleteFunc: func(p *corev1.Pod, finalStateUnknown bool) { queue.Add(key(p)) },
//	}, informer.HandlerOptions{})
//	go inf.Run(ctx)
//	if err := inf.WaitForSync(ctx); err != nil {
//		return err // says why: forbidden, resource not found, ...
//	}
//	pods := inf.Reader().Namespace("default").List(labels.Everything())
//	for p := range inf.Reader().Namespace("default").ListSeq(sel) {
//		// only looping: a large namespace is not copied (store.NamespaceReader.ListSeq)
//	}
//
// Handlers are typed: OnDelete gets the last known T and a flag saying
// whether the final state is known, so there is no tombstone to assert.
// Handlers can be added at any time; one added after Run started (during
// the first list, after the informer synced, during a relist) is first
// handed the cache as it is at that moment, as adds with inInitialList
// set, then every later change, so it sees each object exactly once; its
// Registration's HasSynced turns true once it has had the replay and the
// whole first list. Remove unregisters it.
//
// Freshness: WaitForResourceVersion(ctx, rv) returns once the cache reflects
// every change up to rv, e.g. the resource version a write returned, so a
// controller can read its own writes. WaitForQueued(ctx) returns once
// everything the reflector handed over before the call is in the cache,
// a list at the cache's own resource version included. Fresh(ctx) asks
// the server for its current resource version (one list of at most one
// object, from a quorum read) and waits until the cache has reached it:
// call it before a disruptive action. A cache told a resource version the
// server never issued makes it relist and fail with
// ErrFutureResourceVersion.
//
// Resync (HandlerOptions.ResyncPeriod) replays the cache to a handler as
// updates from each object to itself, from memory, as a late join does:
// nothing is written to the store or re-indexed, and other handlers are
// not involved. It is not a relist: the reflector contacts the server
// again only after a failure, and a relist that finds an object unchanged
// tells no handler.
//
// A relist (after a 410, or Informer.Relist) travels through the queue as
// one bracketed event and the cache deletes what it lacks at its end,
// telling each deletion with finalStateUnknown; Options.AtomicRelists
// makes readers see each list whole. With a source that serves a part of
// the resource (an [Owner], e.g. shard.Source), a handler that implements
// [MovedAwayHandler] hears an object the part lost as OnMovedAway rather
// than OnDelete.
//
// Status and Snapshot say how it is doing: the reflector's phase and the
// reason of its last error, the cache size, the queue depth, and each
// handler's lag; a Snapshot is also what status pages and metrics read.
//
// This package is the engine: everything that takes the informer's lock.
// Around it, on its public API only: package informer/factory shares
// informers by type, resource and selection and starts them together (with
// typed, dynamic and metadata-only helpers); informer/statuspage serves their
// snapshots as an HTML page and JSON; informer/promprovider exports them to
// Prometheus. For code written against client-go,
// github.com/listwatch/listwatch/clientgo/tools/cache's
// NewSharedIndexInformer returns a cache.SharedIndexInformer with
// client-go's semantics on this engine.
//
// # Delivery and memory
//
// A listener in Coalesce mode (the default) keeps at most one pending entry
// per key: a handler that falls behind sees each object's newest state, an
// update carrying the object it saw last, and a deletion followed by a
// re-creation stays a delete and an add. Its memory is bounded by the number
// of keys, not the number of events, and its buffer shrinks after a burst.
// Objects created and deleted while a handler lags are not shown to it.
// InOrder mode delivers every notification, as client-go does, and grows
// with the lag. Registration.Stats reports pending work, the age of the
// oldest pending entry, handler time and panics. In either mode a pending
// update keeps the object it replaced alive until it is delivered: a
// handler that lags by k objects during a relist pins k old versions, and
// one stalled for a whole relist holds a second copy of the cache (as
// client-go's listeners do). A handler that keeps up pins about a page.
//
// # Concurrency
//
// Run starts the reflector, the processing goroutine, a resync goroutine
// (with a timer only while some handler has a resync period) and one
// goroutine per handler, and returns when all of them have stopped. A
// slow handler delays neither the cache nor any other handler. Calls to one
// handler are sequential; per key they follow the order of changes. A
// panicking handler call is recovered, logged (with Run's logger, or the
// handler's own) with the object's key and counted; only that call is
// lost, and the listener carries on. The objects handed out are the cached
// ones: never modify them.
//
// # Bad objects
//
// An object for which Options.Transform fails or returns nil is dropped
// alone: the rest of its list is applied. Drops are logged, counted
// (Dropped) and reported by Status.
//
// # Testing
//
// The tests run informers against fake.Server under testing/synctest: exact
// handler transcripts, relists with missed deletions, late handlers
// (added at random points of a paginated first list, churn and relists),
// resync, the reason WaitForSync reports, and convergence of the cache and
// of every handler's view to the server under seeded random faults, with
// client-go's informer in the same schedule. The drop-in must produce the
// same transcript as client-go's informer for the same scenario (those tests
// live with it, in clientgo/tools/cache).
package informer
