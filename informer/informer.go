package informer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/deltafifo"
	"github.com/listwatch/listwatch/internal/dropin"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/store"
)

// Informer keeps a typed, indexed cache of one resource in step with the
// server and tells registered handlers about every change. See the package
// documentation.
type Informer[T store.Object] struct {
	name  string
	opts  Options[T]
	clock clock.WithTicker
	store *store.Store[T]
	fifo  *deltafifo.FIFO[T]
	sink  *sink[T]
	refl  *reflector.Reflector[T]
	rv    *rvWatermark
	admit *admission[T]
	fresh freshness // what Fresh calls learnt (Freshness)
	// left is the source's Leaver, nil when it is none.
	left func(obj T) bool
	// askedRelist is set by Relist and taken by the next list's begin,
	// which is then quiet: its unchanged objects reach no handler.
	askedRelist atomic.Bool

	// mu guards the fields below. process holds it while distributing, so
	// a handler added late gets the cache replayed with no change slipping
	// between the replay and its first notification.
	mu sync.Mutex
	// handlers are the live registrations, in registration order.
	handlers []*Registration[T]
	// notes is processBatch's reusable notification list; empty between
	// batches.
	notes []notification[T]
	// quietList: the list being applied (between its begin and end,
	// across batches) was asked for with Relist.
	quietList bool
	// runCtx is the context of Run once started; nil before.
	runCtx context.Context
	// resyncWake (capacity 1) tells resyncLoop that a handler with a
	// resync period was added.
	resyncWake chan struct{}
	// resyncers is the number of handlers with a resync period, changed
	// under mu: while it is 0, resyncLoop sleeps without taking mu (which
	// the pop loop holds while it applies a batch).
	resyncers atomic.Int32
	// wg counts listener goroutines started under runCtx.
	wg      sync.WaitGroup
	started bool
	stopped bool
	// processing, when set, is told how long each batch took to process:
	// Options.Reflector.Metrics, if it is a ProcessingObserver.
	processing ProcessingObserver
	// quirks are the client-go behaviours the drop-in asked for
	// (Options.Quirks); the zero value for every other informer.
	quirks dropin.Quirks[T]
	// initialDone is set once the first list has been fully processed;
	// synced is closed at the same moment.
	initialDone bool
	// initialDoneFast mirrors initialDone for lock-free checks.
	initialDoneFast atomic.Bool
	synced          chan struct{}
	log             logr.Logger
}

// ErrStopped is returned when adding a handler to an informer that has stopped.
var ErrStopped = errors.New("informer: stopped")

// ErrAlreadyStarted is returned by a second call to Run.
var ErrAlreadyStarted = errors.New("informer: already started")

// New builds an informer. It starts nothing: call Run.
func New[T store.Object](opts Options[T]) (*Informer[T], error) {
	if opts.Source == nil {
		return nil, errors.New("informer: Options.Source is required")
	}
	if opts.Name == "" {
		opts.Name = "informer"
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	st, err := store.New(store.Options[T]{KeyFunc: opts.KeyFunc, NamelessKeys: opts.NamelessKeys, Indexers: opts.Indexers, ValueIndexers: opts.ValueIndexers})
	if err != nil {
		return nil, fmt.Errorf("informer %s: %w", opts.Name, err)
	}
	inf := &Informer[T]{name: opts.Name, opts: opts, clock: opts.Clock, store: st, rv: newRVWatermark(), log: logr.Discard(), synced: make(chan struct{}), resyncWake: make(chan struct{}, 1)}
	// The sink applies Transform, object by object (admission), rather
	// than the FIFO, which refuses a whole list for one bad object.
	// The FIFO is a pure queue: a list travels through it between list
	// marks, and processBatch sweeps the store at each list's end. What
	// was queued before a list began is applied before its ListBegin
	// (MarkPositions), so that sweep is the relist's one deletion set.
	inf.fifo = deltafifo.New(context.Background(), deltafifo.Options[T]{
		Name: opts.Name, KeyFunc: opts.KeyFunc, NamelessKeys: opts.NamelessKeys, InOrder: opts.OrderedQueue,
		ListMarks: true, MarkPositions: true, WholeLists: opts.AtomicRelists,
	})
	inf.processing = opts.Processing
	if l, ok := sourceAs[Leaver](opts.Source); ok {
		inf.left = func(obj T) bool { return l.Left(obj) }
	}
	if opts.Quirks != nil {
		inf.quirks = *opts.Quirks
		if inf.quirks.Store != nil {
			inf.quirks.Store(st)
		}
	}
	inf.admit = &admission[T]{transform: opts.Transform, check: inf.quirks.Check, log: logr.Discard(), metrics: opts.Reflector.Metrics}
	inf.sink = &sink[T]{ctx: context.Background(), fifo: inf.fifo, admit: inf.admit,
		replaced: inf.checkInitialDone, whole: opts.AtomicRelists}
	cfg := opts.Reflector
	if cfg.KeyFunc == nil {
		cfg.KeyFunc = opts.KeyFunc
	}
	cfg.NamelessKeys = cfg.NamelessKeys || opts.NamelessKeys
	inf.refl, err = reflector.New(reflector.Options[T]{Config: cfg, Name: opts.Name, Source: opts.Source, Store: inf.sink, Clock: opts.Clock,
		OnError: onError(opts.WatchErrorHandler)})
	if err != nil {
		return nil, fmt.Errorf("informer %s: %w", opts.Name, err)
	}
	return inf, nil
}

// Synced returns a channel closed once HasSynced is true.
func (inf *Informer[T]) Synced() <-chan struct{} { return inf.synced }

// Reader returns the read-only view of the cache.
func (inf *Informer[T]) Reader() store.Reader[T] { return inf.store.Reader() }

// AddIndexers adds indexes, also after the informer has started: cached
// objects are indexed at once.
func (inf *Informer[T]) AddIndexers(indexers store.Indexers[T]) error {
	return inf.store.AddIndexers(indexers)
}

// Run runs the informer until ctx ends: the reflector lists and watches,
// one goroutine applies changes to the cache and hands them to the
// handlers, and each handler runs on its own goroutine. Run returns when
// everything it started has stopped.
func (inf *Informer[T]) Run(ctx context.Context) error {
	inf.mu.Lock()
	if inf.started {
		inf.mu.Unlock()
		return ErrAlreadyStarted
	}
	inf.started = true
	inf.log = klog.FromContext(ctx).WithName(inf.name)
	inf.admit.log = inf.log // before the reflector, its only caller, starts
	inf.runCtx = ctx
	for _, r := range inf.handlers {
		inf.startListener(r)
	}
	inf.mu.Unlock()

	ctx, cancel := context.WithCancel(ctx)
	inf.sink.ctx = ctx // before the reflector, the sink's only caller, starts
	var wg sync.WaitGroup
	wg.Go(func() {
		defer cancel()
		if err := inf.refl.Run(ctx); err != nil && ctx.Err() == nil {
			inf.log.Error(err, "reflector stopped")
		}
	})
	wg.Go(func() { inf.resyncLoop(ctx) })
	inf.popLoop(ctx)
	cancel()
	inf.fifo.Close()
	wg.Wait()

	inf.mu.Lock()
	inf.stopped = true
	for _, r := range inf.handlers {
		r.l.stop()
	}
	inf.mu.Unlock()
	inf.wg.Wait()
	return nil
}

// popLoop applies queued changes, a batch of keys at a time, until ctx ends.
func (inf *Informer[T]) popLoop(ctx context.Context) {
	for {
		err := inf.fifo.PopBatch(ctx, inf.processBatch)
		if err != nil && (ctx.Err() != nil || errors.Is(err, deltafifo.ErrClosed)) {
			return
		}
		if err != nil {
			inf.log.Error(err, "processing a change failed")
		}
		inf.checkInitialDone()
	}
}

// checkInitialDone marks the initial list done once the FIFO says so. It is
// called after every pop and after every Replace, since an empty first list
// leaves nothing to pop.
func (inf *Informer[T]) checkInitialDone() {
	if inf.initialDoneFast.Load() || !inf.fifo.HasSynced() {
		return
	}
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if inf.initialDone {
		return
	}
	inf.initialDone = true
	inf.initialDoneFast.Store(true)
	close(inf.synced)
	for _, r := range inf.handlers {
		r.l.markInitial()
	}
}

// Relist asks the reflector for a new list now, without waiting: for when
// what the cache should hold changed on the caller's side, e.g. a sharded
// source's assignment or a selector the source applies. The new list goes
// through the cache like any relist: handlers hear the objects it adds or
// changes, and deletions (FinalStateUnknown) for the ones it no longer
// has. It is not a failure: no backoff (unless one is already running, in
// which case the cycle after it is the relist), counted as relist cause
// reflector.ReasonRequested. Requests are paced (3 at once, then one per
// reflector.Config.Backoff.Initial, 800ms by default; more in that time
// make one relist), so calling it in a loop cannot flood the server.
//
// The objects the relist finds unchanged are told to no handler, not even
// to the drop-in's (clientgo/tools/cache), which hear the unchanged
// objects of the reflector's own relists as updates, as client-go's do: a
// relist asked for is listwatch's, which client-go handlers do not expect
// to hear of (a scope change tells them only what it adds and removes).
func (inf *Informer[T]) Relist() {
	inf.askedRelist.Store(true)
	inf.refl.Relist()
}

// CachedAt returns the cached objects once the cache reflects resource
// version rv (WaitForResourceVersion) and holds every list the reflector
// handed it before the call (WaitForQueued: a relist at the cache's own
// resource version passes the first wait before it is applied), or the
// wait's error. The objects are the cache's: copy one before changing
// it. A source that serves a relist from the informer's own cache
// (shard.Attach, scope.Attach) starts from them: the reflector relists at
// the cache's resource version, so what the cache holds then is a
// consistent state at rv, to which the source adds what it lists from the
// server at exactly rv.
func (inf *Informer[T]) CachedAt(ctx context.Context, rv string) ([]T, error) {
	if err := inf.WaitForResourceVersion(ctx, rv); err != nil {
		return nil, err
	}
	if err := inf.WaitForQueued(ctx); err != nil {
		return nil, err
	}
	return inf.store.Reader().List(), nil
}

// HasSynced reports whether the first complete list has been applied to the
// cache and handed to every handler registered so far.
func (inf *Informer[T]) HasSynced() bool {
	if !inf.fifo.HasSynced() {
		return false
	}
	inf.mu.Lock()
	defer inf.mu.Unlock()
	return inf.initialDone
}

// LastSyncResourceVersion is the resource version the cache reflects:
// every write of the server up to it has been applied (see
// [Informer.WaitForResourceVersion]). With [Options.OrderedQueue] it moves
// with every watch event applied, as client-go's store's does (controllers
// that check they read their own writes compare with it); otherwise with a
// list's end, a bookmark, and the batch that empties the queue, since a
// coalesced key may be applied before an older write of another key. It
// is the store's, so
// Reader().LastSyncResourceVersion() and the drop-in's
// GetIndexer().LastStoreSyncResourceVersion() say the same. The reflector's
// Status().LastSyncResourceVersion is the last one it handed over, which
// may not have been applied yet.
func (inf *Informer[T]) LastSyncResourceVersion() string {
	return inf.store.Reader().LastSyncResourceVersion()
}

// Status reports the reflector's health, including why it is not synced.
// While the reflector reports no error of its own, it also reports the
// last object the informer dropped (a *DropError: a Transform failed or
// returned nil; in the drop-in, an object of the wrong type) until a list
// completes without dropping any. Dropped counts them all. Before a drop,
// it reports that the informer is stale, with an error wrapping ErrStale
// (see Options.FreshnessBound), until a Fresh call clears it.
func (inf *Informer[T]) Status() reflector.Status {
	return inf.admit.status(inf.fresh.statusOf(inf.refl.Status()))
}

// Dropped is the number of objects dropped so far: not cached and not
// handed to any handler (see Status).
func (inf *Informer[T]) Dropped() int64 { return inf.admit.dropped.Load() }

// IsStopped reports whether Run has returned or is returning.
func (inf *Informer[T]) IsStopped() bool {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	return inf.stopped
}

// onError adapts a WatchErrorHandler to the reflector's error hook.
func onError(h func(context.Context, error)) func(context.Context, reflector.Reason, error) {
	if h == nil {
		return nil
	}
	return func(ctx context.Context, _ reflector.Reason, err error) { h(ctx, err) }
}
