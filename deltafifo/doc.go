// Package deltafifo is the queue between a reflector (the producer) and an
// informer's processing loop (the consumer). It records what happened to
// each object since the consumer last looked, and hands those changes out in
// order.
//
// It has two modes, chosen per FIFO with Options.InOrder:
//
//   - Coalescing (the default, client-go's DeltaFIFO): changes accumulate per
//     key, as a slice of Delta in arrival order, and keys are popped in the
//     order they were first queued. Two deletions in a row collapse into one.
//   - In order (client-go's RealFIFO, which client-go 0.37 informers use):
//     every change is its own event, popped strictly in arrival order with
//     no coalescing.
//
// Delta types are Added, Updated, Deleted, Replaced and Sync. Replace (a
// relist) queues Replaced deltas for the listed objects and a Deleted delta
// with FinalStateUnknown set for every key that is queued or in the
// consumer's store (KnownObjects) but missing from the list; its Object is
// the last state known, of type T, so there is no tombstone type to assert.
// Resync queues Sync deltas for known objects with nothing queued.
//
// With Options.ListMarks the FIFO is a pure queue that never reads the
// consumer's store (the informer uses it so): a list travels through it
// between a [ListBegin] and a [ListEnd] item, which [FIFO.PopBatch] hands
// over in queue order, and the consumer deletes what its store holds and
// the list lacks (the informer sweeps its store at the ListEnd). The FIFO
// still queues the deletions of keys it holds itself, unless
// Options.MarkPositions makes the ListBegin a position in the queue (what
// was queued before it is handed out first): then the consumer's sweep is
// the one deletion set. Writes and lists never wait for a batch being
// applied.
//
// For code written against client-go, clientgo/tools/cache's
// NewDeltaFIFOWithOptions takes a cache.DeltaFIFOOptions and returns a
// cache.Queue on this engine with the same behaviour (cache.Deltas,
// cache.DeletedFinalStateUnknown, cache.ErrFIFOClosed), also implementing
// cache.QueueWithBatch.
//
// # Usage
//
//	f := deltafifo.New(ctx, deltafifo.Options[*corev1.Pod]{KnownObjects: podStore})
//	_ = f.Replace(pods, rv)      // from the reflector's list
//	_ = f.Update(pod)            // from its watch
//	err := f.Pop(ctx, func(key string, ds []deltafifo.Delta[*corev1.Pod], initial bool) error {
//		for _, d := range ds {
//			// apply d to podStore, notify handlers
//		}
//		return nil
//	})
//
// PopBatch hands up to Options.MaxBatch distinct keys to one call.
// HasSynced (and the Synced channel) report when every item of the first
// Replace has been popped and processed (with list marks: when the first
// ListEnd has been). Close makes Pop return ErrClosed
// once the queue is drained.
//
// Objects that cannot be queued (nil, no key, failed transform) make the
// call fail with an error wrapping ErrInvalidObject or ErrTransform; such a
// call, Replace included, queues nothing and disturbs nothing already
// queued, and Options.Metrics counts it.
//
// # Concurrency
//
// All methods are safe for concurrent use. Writers never block on the
// consumer for longer than one process call: the process function passed to
// Pop runs under the FIFO's lock, so that it can update the KnownObjects
// store atomically with the pop (Replace and Resync read that store under
// the same lock). It must therefore be quick and must not call the FIFO.
// PopBatch's process function runs without the lock, so that adds and
// updates (and every write in in-order mode) are queued while a batch is
// applied; Replace, Resync and a coalescing Delete, which read the
// KnownObjects store, wait for the batch to finish, so they see the store
// and the queue consistent as with Pop. Use a single consumer goroutine:
// with several, two could process different changes of one key at once.
//
// The deltas slice handed to a process function is reused once the function
// returns; copy what must outlive the call. Objects are shared, not copied:
// do not mutate them.
//
// Pop blocks on a sync.Cond, so code under testing/synctest sees a waiting
// consumer as durably blocked; it also returns when its context ends.
//
// # Testing
//
// The package's tests pin both modes' exact pop sequences and check the
// drop-in against client-go's DeltaFIFO, and in-order mode against client-go's
// RealFIFO, on seeded random operation sequences, comparing every popped
// cache.Deltas deeply. Each mode's queue (the coalescer, the ordered queue:
// one internal interface, so the rest of the FIFO never asks which mode it
// runs) is also tested alone, without goroutines (queue_test.go). In tests
// of code that uses a FIFO, drive it directly
// (Add, Replace, ...) and pop with a recording process function; wait for a
// blocked consumer with synctest.Wait rather than sleeping.
package deltafifo
