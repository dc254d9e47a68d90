package informer

import (
	"time"

	"github.com/listwatch/listwatch/deltafifo"
	"github.com/listwatch/listwatch/store"
)

// processBatch applies a batch of keys' deltas to the cache, in one store
// transaction (readers see the whole batch or none of it, and the batch
// waits for readers once), and hands the resulting notifications to the
// handlers: each listener gets the whole batch under one lock, with at
// most one wake-up, and the clock is read at most once for the batch.
// popLoop hands it to [deltafifo.FIFO.PopBatch], which calls it without
// the FIFO's lock (the reflector keeps queueing meanwhile); it holds the
// informer's mu, so a handler added meanwhile is replayed the cache either
// before the batch or after it. Keys in a batch are distinct, and initial
// holds for all of it or none.
func (inf *Informer[T]) processBatch(items []deltafifo.Item[T], initial bool) error {
	if observing(inf.processing) {
		defer inf.observeProcessing(inf.clock.Now())
	}
	inf.mu.Lock()
	defer inf.mu.Unlock()
	var firstErr error
	notes, syncs := inf.notes[:0], false
	inf.store.Write(func(tx *store.Tx[T]) {
		for i := range items {
			key, deltas := items[i].Key, items[i].Deltas
			for j := range deltas {
				n, ok, err := apply(tx, key, &deltas[j], initial)
				if err != nil {
					inf.log.Error(err, "could not apply a change to the cache; it is skipped", "key", key, "delta", deltas[j].Type)
					if firstErr == nil {
						firstErr = err
					}
					continue
				}
				if ok {
					notes = append(notes, n)
					syncs = syncs || n.Kind == Synced
				}
			}
		}
	})
	if len(notes) > 0 {
		inf.distribute(notes, syncs)
	}
	clear(notes)
	inf.notes = notes[:0]
	return firstErr
}

// observeProcessing reports the time since start, when the batch has been
// applied and distributed and mu released.
func (inf *Informer[T]) observeProcessing(start time.Time) {
	inf.processing.ObserveProcessing(inf.clock.Since(start))
}

// apply writes one delta to the store and returns the notification it makes.
// ok is false when there is nothing to tell.
func apply[T store.Object](tx *store.Tx[T], key string, d *deltafifo.Delta[T], initial bool) (n Notification[T], ok bool, err error) {
	n.Key = key
	switch d.Type {
	case deltafifo.Deleted:
		old, existed := tx.Delete(key)
		n.Kind, n.Object, n.FinalStateUnknown = Deleted, d.Object, d.FinalStateUnknown
		if d.FinalStateUnknown || isZero(d.Object) {
			// The queue's idea of the last state may be older than the
			// cache's; the cache saw every change applied.
			if existed {
				n.Object = old
			}
		}
		return n, existed || !isZero(n.Object), nil
	case deltafifo.Replaced:
		// A relist that found an object unchanged keeps the cached object,
		// so handlers keep seeing the very object they were given.
		if old, ok := tx.Get(key); ok && sameVersion(old, d.Object) {
			n.Kind, n.Object = Synced, old
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
			n.Kind, n.Object, n.InInitialList = Added, d.Object, initial
		case d.Type == deltafifo.Sync:
			n.Kind, n.Object = Synced, d.Object
		default:
			n.Kind, n.Old, n.Object = Updated, old, d.Object
		}
		return n, true, nil
	}
}

// distribute hands notes to every handler, resyncs only to those that are
// due; mu held. hasSyncs says whether notes holds any resync.
func (inf *Informer[T]) distribute(notes []Notification[T], hasSyncs bool) {
	st := stamp{clock: inf.clock}
	for _, r := range inf.handlers {
		r.l.addBatch(notes, r.syncing || !hasSyncs, &st)
	}
}

func (inf *Informer[T]) key(obj T) (string, error) {
	if inf.opts.KeyFunc != nil {
		return inf.opts.KeyFunc(obj)
	}
	return store.NamespacedKey(obj)
}

func sameVersion[T store.Object](a, b T) bool {
	return a.GetResourceVersion() == b.GetResourceVersion()
}

// isZero reports whether v is T's zero value (a nil pointer, for the
// pointer types informers hold) without requiring T to be comparable.
func isZero[T any](v T) bool {
	var zero T
	return any(v) == any(zero)
}
