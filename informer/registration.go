package informer

import (
	"context"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Registration is a handler's membership of an informer.
type Registration[T any] struct {
	inf interface{ remove(*Registration[T]) }
	l   *listener[T]
	// resync is the handler's resync period; 0 means never.
	resync time.Duration
	// nextResync is when the handler is next due; guarded by the informer's mu.
	nextResync time.Time
	// syncing makes a relist's unchanged objects reach the handler as
	// resyncs (Resynced). Only the drop-in sets it, as client-go does (see
	// dropin.Quirks.SyncingHandlers); guarded by the informer's mu.
	syncing bool
	// done is closed when the handler will not be called again and no call
	// is in progress: when the listener goroutine has returned (after
	// Remove, or when Run stops), or on Remove if none was ever started.
	done chan struct{}
	// name is HandlerOptions.Name; "" when none was given.
	name string
	// ownLogger is set when HandlerOptions.Logger was given; otherwise the
	// listener logs with the informer's logger as of Run.
	ownLogger bool
}

// HasSynced reports whether the handler has been handed the whole initial
// list: the informer's first list for handlers added before it synced, the
// replay of the cache for handlers added later.
func (r *Registration[T]) HasSynced() bool { return r.l.hasSynced() }

// Synced returns a channel closed once HasSynced is true.
func (r *Registration[T]) Synced() <-chan struct{} { return r.l.synced }

// Done returns a channel closed once the handler will not be called again
// and no call is in progress: after Remove (at once if the informer never
// ran) or when the informer stops.
func (r *Registration[T]) Done() <-chan struct{} { return r.done }

// Stats returns the handler's delivery figures: pending work, lag, handler
// time, panics.
func (r *Registration[T]) Stats() ListenerStats { return r.l.stats() }

// Remove unregisters the handler. Pending notifications are dropped; a call
// in progress finishes. Removing twice is harmless.
func (r *Registration[T]) Remove() { r.inf.remove(r) }

// AddHandler registers h. A handler added after Run has started (while the
// first list is applied, after the informer synced, during a relist) is
// first handed every cached object as an add with inInitialList set, then
// every later change; its HasSynced turns true once it has been handed both
// that replay and the rest of the first list. Handlers can be added at any
// time before Run returns.
func (inf *Informer[T]) AddHandler(h Handler[T], opts HandlerOptions) (*Registration[T], error) {
	mode := inf.opts.Delivery
	if opts.Delivery != nil {
		mode = *opts.Delivery
	}
	resync := opts.ResyncPeriod
	switch {
	case resync == 0:
		resync = inf.opts.ResyncPeriod
	case resync < 0:
		resync = 0
	}

	inf.mu.Lock()
	defer inf.mu.Unlock()
	// inf.log changes when Run starts; read it under mu.
	log := inf.log
	if opts.Logger != nil {
		log = *opts.Logger
	}
	r := &Registration[T]{inf: inf, name: opts.Name, resync: resync, done: make(chan struct{}), syncing: inf.quirks.SyncingHandlers,
		ownLogger: opts.Logger != nil, l: newListener(withMovedAway(h, inf.opts.Source), listenerOptions{Mode: mode, Clock: inf.clock, Logger: log})}
	r.l.onPanic, r.l.keyOf = inf.quirks.OnPanic, inf.key
	if inf.stopped {
		return nil, ErrStopped
	}
	if resync > 0 {
		r.nextResync = inf.clock.Now().Add(resync)
	}
	// Replay the cache, whatever it holds: after the informer synced, but
	// also while the first list is being applied (part of it is cached
	// already and will not be handed out again) and during a relist. Under
	// mu, process cannot apply or distribute in between, so the handler's
	// first live notification follows the replayed state. A handler added
	// before the informer synced is marked with the others when it does
	// (checkInitialDone).
	inf.replayLocked(r, noteAdded)
	if inf.initialDone {
		r.l.markInitial()
	}
	inf.handlers = append(inf.handlers, r)
	if inf.started {
		inf.startListener(r)
	}
	if resync > 0 {
		inf.resyncers.Add(1)
		inf.wakeResync()
	}
	return r, nil
}

// replayLocked hands every cached object to r's listener as a notification
// of kind (Added, in the initial list, for a handler that joins; Resynced
// for a resync), from the store, with no store write; mu held. Chunks of
// replayChunk: one listener lock and clock read each, without a copy of
// the whole cache.
func (inf *Informer[T]) replayLocked(r *Registration[T], kind kind) {
	objs := inf.store.Reader().List()
	replay := make([]notification[T], 0, min(len(objs), replayChunk))
	st := stamp{clock: inf.clock}
	for i, obj := range objs {
		key, err := inf.key(obj)
		if err == nil {
			replay = append(replay, notification[T]{kind: kind, Key: key, Object: obj, InInitialList: kind == noteAdded})
		}
		if len(replay) == replayChunk || i == len(objs)-1 {
			r.l.addBatch(replay, true, &st)
			clear(replay)
			replay = replay[:0]
		}
	}
}

const replayChunk = 1024

// startListener runs r's listener under the informer's run context; mu held.
// A handler registered before Run was given the discard logger then: it
// logs with Run's from now on.
func (inf *Informer[T]) startListener(r *Registration[T]) {
	r.l.panicLog = r.l.log
	if !r.ownLogger {
		r.l.log = inf.log
		// onPanic gets Run's logger as Run got it, without the informer's
		// name: client-go's panic log carries no name but the handler's.
		r.l.panicLog = klog.FromContext(inf.runCtx)
	}
	ctx := inf.runCtx
	inf.wg.Go(func() {
		defer close(r.done)
		r.l.run(ctx)
	})
}

// remove unregisters r. Its listener goroutine, if Run started one, closes
// r.done when it returns; if none was started, none ever will be, and
// remove closes it.
func (inf *Informer[T]) remove(r *Registration[T]) {
	inf.mu.Lock()
	for i, h := range inf.handlers {
		if h == r {
			inf.handlers = append(inf.handlers[:i:i], inf.handlers[i+1:]...)
			if h.resync > 0 {
				inf.resyncers.Add(-1)
			}
			if !inf.started {
				close(r.done)
			}
			break
		}
	}
	inf.mu.Unlock()
	r.l.stop()
}

// resyncLoop resyncs each handler when it is due: it replays the cache to
// that handler alone, from the store, as a late join does (no store write,
// no re-indexing, nothing through the FIFO). It sleeps until the earliest
// due time, and without a handler that has a resync period it has no timer
// at all; AddHandler wakes it (wakeResync).
func (inf *Informer[T]) resyncLoop(ctx context.Context) {
	for {
		var (
			due   <-chan time.Time
			timer clock.Timer
		)
		// Without a handler to resync there is nothing to look at until
		// one joins, and no need to take mu (which the pop loop holds
		// while it applies a batch).
		if inf.resyncers.Load() > 0 {
			if next, ok := inf.nextResync(); ok {
				timer = inf.clock.NewTimer(max(next.Sub(inf.clock.Now()), 0))
				due = timer.C()
			}
		}
		select {
		case <-ctx.Done():
		case <-inf.resyncWake:
		case <-due:
			inf.resyncDue()
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// wakeResync makes resyncLoop look at the handlers' due times again.
func (inf *Informer[T]) wakeResync() {
	select {
	case inf.resyncWake <- struct{}{}:
	default:
	}
}

// nextResync returns the earliest time a handler is due, if any has a
// resync period.
func (inf *Informer[T]) nextResync() (next time.Time, ok bool) {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	for _, r := range inf.handlers {
		if r.resync > 0 && (!ok || r.nextResync.Before(next)) {
			next, ok = r.nextResync, true
		}
	}
	return next, ok
}

// resyncDue replays the cache to every handler that is due and sets its
// next due time. In the drop-in, it also sets each handler's syncing flag
// to whether it was due, as client-go's resync check does: a relist that
// finds an object unchanged tells the handlers of the last check that
// were due (see compatQuirks.syncingHandlers).
func (inf *Informer[T]) resyncDue() {
	now := inf.clock.Now()
	inf.mu.Lock()
	defer inf.mu.Unlock()
	for _, r := range inf.handlers {
		due := r.resync > 0 && !now.Before(r.nextResync)
		if inf.quirks.SyncingHandlers {
			r.syncing = due
		}
		if due {
			r.nextResync = now.Add(r.resync)
			inf.replayLocked(r, noteResynced)
		}
	}
}
