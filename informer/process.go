package informer

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch/deltafifo"
	"github.com/listwatch/listwatch/internal/nilcheck"
	"github.com/listwatch/listwatch/internal/resourceversion"
	"github.com/listwatch/listwatch/store"
)

// processBatch applies a batch popped from the FIFO to the cache, in one
// store transaction (readers see the whole batch or none of it, and the
// batch waits for readers once), and hands the resulting notifications to
// the handlers: each listener gets the whole batch under one lock, with
// at most one wake-up, and the clock is read at most once for the batch.
// popLoop hands it to [deltafifo.FIFO.PopBatch], which calls it without
// the FIFO's lock (the reflector keeps queueing meanwhile); it holds the
// informer's mu, so a handler added meanwhile is replayed the cache either
// before the batch or after it. Keys in a batch are distinct (except in a
// whole list, in order mode), and initial holds for all of it or none.
func (inf *Informer[T]) processBatch(items []deltafifo.Item[T], initial bool) error {
	if p := inf.processing; p != nil && p.Observing() {
		defer inf.observeProcessing(inf.clock.Now())
	}
	inf.mu.Lock()
	defer inf.mu.Unlock()
	var firstErr error
	inOrder := inf.opts.OrderedQueue
	a := applier[T]{notes: inf.notes[:0], initial: initial, tellUnknownDeletes: inOrder, deletionsFirst: inOrder, rvPerEvent: inOrder, left: inf.left,
		quiet: inf.quietList, asked: &inf.askedRelist}
	inf.store.Write(func(tx *store.Tx[T]) {
		a.batch(tx, items, func(err error, key string) {
			inf.log.Error(err, "could not apply a change to the cache; it is skipped", "key", key)
			if firstErr == nil {
				firstErr = err
			}
		})
	})
	inf.quietList = a.quiet
	if a.rv != "" {
		inf.rv.set(a.rv)
	}
	if len(a.notes) > 0 {
		inf.distribute(a.notes, a.syncs)
	}
	clear(a.notes)
	inf.notes = a.notes[:0]
	return firstErr
}

// applier is the apply stage: it turns the FIFO's items into store
// changes and the notifications they make, with no I/O and no locks of
// its own (the caller holds the store's transaction). A list reaches it
// between list marks: at the ListBegin it opens the store's replace
// session; every object written or found unchanged after it counts as
// listed; at the ListEnd the store deletes everything else, and each such
// object is told as a Deleted with FinalStateUnknown and its last cached
// state. What the FIFO held when the list began comes before the
// ListBegin ([deltafifo.Options.MarkPositions]), so this sweep is the
// list's one deletion set: the FIFO queues none.
type applier[T store.Object] struct {
	// notes collects the notifications, in order.
	notes []notification[T]
	// syncs says whether notes holds a resync.
	syncs bool
	// initial: the batch belongs to the first list.
	initial bool
	// tellUnknownDeletes tells a watch deletion of a key the cache lacks
	// (in-order delivery, client-go's RealFIFO); otherwise it is dropped,
	// as client-go's DeltaFIFO drops it.
	tellUnknownDeletes bool
	// deletionsFirst (in-order delivery) tells the deletions a list finds
	// before its objects, as client-go's RealFIFO queues them, when the
	// whole list is in one batch; a list spanning batches can only know
	// them at its end.
	deletionsFirst bool
	// rvPerEvent (in-order delivery): each watch event applied outside a
	// list brings the store to its object's resource version, as client-go's
	// store records it, since the FIFO hands the events over in the order
	// the server wrote them; otherwise only a ListProgress item does (a
	// coalesced key may be applied before an older write of another key).
	// Controllers that check they read their own writes (v1.37's
	// consistency stores) compare with it.
	rvPerEvent bool
	// rv is the resource version the batch brings the store to (its
	// ListProgress item or, with rvPerEvent, its last event), recorded in
	// the batch's transaction; "" when it has none.
	rv string
	// left, if set, reports whether an object a list's sweep deletes left
	// the source's scope (a [Leaver]): its deletion is then told with
	// its final state known.
	left func(obj T) bool
	// quiet: the list being applied was asked for (Informer.Relist); the
	// objects it finds unchanged make no notification. asked is the
	// informer's flag, taken at each list's begin.
	quiet bool
	asked *atomic.Bool
}

// batch applies a batch of items in order, reporting each item's error
// to failed.
func (a *applier[T]) batch(tx *store.Tx[T], items []deltafifo.Item[T], failed func(err error, key string)) {
	for i := range items {
		if items[i].List == deltafifo.ListBegin && a.asked != nil {
			a.quiet = a.asked.Swap(false)
		}
		if items[i].List == deltafifo.ListBegin && a.deletionsFirst {
			if end := listEnd(items[i:]); end > 0 {
				a.sweepFirst(tx, items[i+1:i+end])
				continue // the list's items follow, with no session open
			}
		}
		if err := a.item(tx, &items[i]); err != nil {
			failed(err, items[i].Key)
		}
	}
}

// listEnd returns the index in items (which starts with a ListBegin) of
// the ListEnd closing it, or 0 if the list goes on past the batch.
func listEnd[T any](items []deltafifo.Item[T]) int {
	for j := 1; j < len(items); j++ {
		if items[j].List == deltafifo.ListEnd {
			return j
		}
	}
	return 0
}

// sweepFirst deletes, before a list's items are applied, every cached
// object whose key none of them mentions: what the list's end would
// delete, since nothing else is applied between its begin and end (a
// later list's ListBegin among them sweeps again, for its own items).
// The ListEnd that follows then finds no session open and deletes
// nothing.
func (a *applier[T]) sweepFirst(tx *store.Tx[T], list []deltafifo.Item[T]) {
	tx.BeginReplace()
	for i := range list {
		tx.Keep(list[i].Key)
	}
	a.end(tx)
}

// end closes the replace session, telling each object it deletes: with
// FinalStateUnknown, unless it left the source's scope (left).
func (a *applier[T]) end(tx *store.Tx[T]) {
	tx.EndReplace(func(key string, old T) {
		unknown := a.left == nil || nilcheck.Is(old) || !a.left(old)
		a.notes = append(a.notes, notification[T]{kind: noteDeleted, Key: key, Object: old, FinalStateUnknown: unknown})
	})
}

// item applies one popped item. An error skips the delta it came from;
// the rest of the item is still applied and the first error returned.
func (a *applier[T]) item(tx *store.Tx[T], it *deltafifo.Item[T]) error {
	switch it.List {
	case deltafifo.ListBegin:
		tx.BeginReplace()
		return nil
	case deltafifo.ListEnd:
		a.end(tx)
		a.quiet = false
		return nil
	case deltafifo.ListProgress:
		// An empty or non-numeric resource version says nothing about
		// what the store reflects.
		if _, ok := resourceversion.Parse(it.ResourceVersion); ok {
			a.rv = it.ResourceVersion
			tx.SetResourceVersion(a.rv)
		}
		return nil
	}
	var firstErr error
	for j := range it.Deltas {
		n, ok, err := apply(tx, it.Key, &it.Deltas[j], a.initial, a.tellUnknownDeletes)
		switch {
		case err != nil:
			if firstErr == nil {
				firstErr = fmt.Errorf("%s delta: %w", it.Deltas[j].Type, err)
			}
		case ok && a.quiet && it.Deltas[j].Type == deltafifo.Replaced && n.kind == noteResynced:
			// an unchanged object of a relist asked for: nothing to tell
		case ok:
			a.notes = append(a.notes, n)
			a.syncs = a.syncs || n.kind == noteResynced
		}
	}
	if a.rvPerEvent && !tx.Replacing() {
		a.advance(tx, it.Deltas)
	}
	return firstErr
}

// advance records the resource version of the last watch event of deltas
// as the store's, when it is a number: the last applied, as a
// ListProgress item records it (an event from the far future moves it
// only until the next). A list's objects (Replaced, or deleted with
// FinalStateUnknown), whose versions come in no order, and a resync's
// cached object leave it alone.
func (a *applier[T]) advance(tx *store.Tx[T], deltas []deltafifo.Delta[T]) {
	for j := len(deltas) - 1; j >= 0; j-- {
		d := &deltas[j]
		watched := d.Type == deltafifo.Added || d.Type == deltafifo.Updated || (d.Type == deltafifo.Deleted && !d.FinalStateUnknown)
		if !watched || nilcheck.Is(d.Object) {
			continue
		}
		rv := d.Object.GetResourceVersion()
		if _, ok := resourceversion.Parse(rv); ok {
			tx.SetResourceVersion(rv)
			a.rv = rv
		}
		return
	}
}

// observeProcessing reports the time since start, when the batch has been
// applied and distributed and mu released.
func (inf *Informer[T]) observeProcessing(start time.Time) {
	inf.processing.ObserveProcessing(inf.clock.Since(start))
}

// apply writes one delta to the store and returns the notification it makes.
// ok is false when there is nothing to tell: a deletion of a key the cache
// lacks, with no object, or (unless tellUnknown) one from a watch event.
func apply[T store.Object](tx *store.Tx[T], key string, d *deltafifo.Delta[T], initial, tellUnknown bool) (n notification[T], ok bool, err error) {
	n.Key = key
	switch d.Type {
	case deltafifo.Deleted:
		old, existed := tx.Delete(key)
		n.kind, n.Object, n.FinalStateUnknown = noteDeleted, d.Object, d.FinalStateUnknown
		if d.FinalStateUnknown || nilcheck.Is(d.Object) {
			// The queue's idea of the last state may be older than the
			// cache's; the cache saw every change applied.
			if existed {
				n.Object = old
			}
		}
		return n, existed || (!nilcheck.Is(n.Object) && (tellUnknown || d.FinalStateUnknown)), nil
	case deltafifo.Replaced:
		// A relist that found an object unchanged keeps the cached object,
		// so handlers keep seeing the very object they were given; it
		// counts as listed all the same.
		if old, ok := tx.Get(key); ok && sameVersion(old, d.Object) {
			tx.Keep(key)
			n.kind, n.Object = noteResynced, old
			return n, true, nil
		}
		fallthrough
	default: // Added, Updated, Replaced with a new version, Sync
		old, existed, err := tx.Swap(key, d.Object)
		if err != nil {
			return n, false, err
		}
		switch {
		case !existed:
			n.kind, n.Object, n.InInitialList = noteAdded, d.Object, initial
		case d.Type == deltafifo.Sync:
			n.kind, n.Object = noteResynced, d.Object
		default:
			n.kind, n.Old, n.Object = noteUpdated, old, d.Object
		}
		return n, true, nil
	}
}

// distribute hands notes to every handler, resyncs only to those that are
// due; mu held. hasSyncs says whether notes holds any resync.
func (inf *Informer[T]) distribute(notes []notification[T], hasSyncs bool) {
	st := stamp{clock: inf.clock}
	for _, r := range inf.handlers {
		r.l.addBatch(notes, r.syncing || !hasSyncs, &st)
	}
}

func (inf *Informer[T]) key(obj T) (string, error) {
	switch {
	case inf.opts.KeyFunc != nil:
		return inf.opts.KeyFunc(obj)
	case inf.opts.NamelessKeys:
		return store.MetaNamespaceKey(obj)
	}
	return store.NamespacedKey(obj)
}

// sameVersion says whether a and b are one version of an object: equal
// resource versions, not empty. An empty one says nothing (an object added
// to the cache by hand, a fake client that sets none), so a listed object
// without one replaces the cached one, as client-go's relist replaces
// every object.
func sameVersion[T store.Object](a, b T) bool {
	rv := a.GetResourceVersion()
	return rv != "" && rv == b.GetResourceVersion()
}
