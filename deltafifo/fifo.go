package deltafifo

import (
	"context"
	"fmt"

	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/store"
)

// FIFO is a typed delta queue between a producer (usually a reflector) and
// one consumer that pops. See the package documentation.
type FIFO[T store.Object] struct {
	// c is the engine; it is never nil.
	c *core[T]
}

// New returns an empty FIFO. Its logger is klog.FromContext(ctx), named
// after opts.Name. ctx is used for nothing else.
func New[T store.Object](ctx context.Context, opts Options[T]) *FIFO[T] {
	name := opts.Name
	if name == "" {
		name = "DeltaFIFO"
	}
	keyOf := opts.KeyFunc
	switch {
	case keyOf != nil:
	case opts.NamelessKeys:
		keyOf = store.MetaNamespaceKey[T]
	default:
		keyOf = store.NamespacedKey[T]
	}
	cfg := config[T]{
		name:      name,
		logger:    klog.LoggerWithName(klog.FromContext(ctx), name),
		keyOf:     keyOf,
		transform: opts.Transform,
		invalid: func(_ T, err error) error {
			return fmt.Errorf("%w: %w", ErrInvalidObject, err)
		},
		transformFailed: func(err error) error {
			return fmt.Errorf("%w: %w", ErrTransform, err)
		},
		closedErr:      ErrClosed,
		rejectClosed:   true,
		rejectEmptyKey: !opts.NamelessKeys,
		replaceType:    Replaced,
		inOrder:        opts.InOrder,
		maxBatch:       opts.MaxBatch,
		metrics:        opts.Metrics,
		listMarks:      opts.ListMarks,
		wholeLists:     opts.ListMarks && opts.WholeLists,
		positions:      opts.ListMarks && opts.MarkPositions,
	}
	if opts.ListMarks {
		cfg.rvOf = func(obj T) string { return obj.GetResourceVersion() }
	}
	if opts.KnownObjects != nil && !opts.ListMarks {
		cfg.known = typedKnown[T]{opts.KnownObjects}
	}
	return &FIFO[T]{c: newCore(cfg)}
}

// typedKnown adapts the public, infallible KnownObjects to the core's view.
type typedKnown[T any] struct{ k KnownObjects[T] }

func (t typedKnown[T]) ListKeys() []string { return t.k.ListKeys() }

func (t typedKnown[T]) GetByKey(key string) (T, bool, error) {
	obj, ok := t.k.GetByKey(key)
	return obj, ok, nil
}

// Add queues an Added delta for obj. It fails with ErrInvalidObject for a
// nil object or one without a key (key function error or empty key), with ErrTransform if the transform
// fails, and with ErrClosed after Close; a failed call queues nothing.
func (f *FIFO[T]) Add(obj T) error { return f.c.write(Added, obj) }

// Update queues an Updated delta for obj. Errors are as for Add.
func (f *FIFO[T]) Update(obj T) error { return f.c.write(Updated, obj) }

// Delete queues a Deleted delta for obj. In coalescing mode it is dropped
// when neither the FIFO nor KnownObjects has the key (nothing to report),
// and it collapses into an immediately preceding deletion of the same key.
// Errors are as for Add.
func (f *FIFO[T]) Delete(obj T) error { return f.c.write(Deleted, obj) }

// Replace queues a relist: a Replaced delta for every object in list, and a
// Deleted delta with FinalStateUnknown for every key that is queued or known
// but not in list. In in-order mode the deletions come first. The list is
// checked and transformed before anything is queued: any bad object makes
// Replace fail with the queue untouched. resourceVersion is accepted for
// symmetry with client-go and not used.
//
// With [Options.ListMarks] the list is queued between a [ListBegin] and a
// [ListEnd] carrying resourceVersion, and the deletions are only those of
// keys the FIFO itself holds.
func (f *FIFO[T]) Replace(list []T, resourceVersion string) error {
	return f.c.replace(list, resourceVersion)
}

// ReplacePage queues one page of a list that arrives in pages, so that
// the whole list is never held at once: a Replaced delta for every object
// in list, nothing else. first opens a new list (a list begun and never
// ended is abandoned: its objects are then like any other queued or known
// ones). ReplaceEnd completes the list. The page is checked and
// transformed before anything is queued, as for Replace. Until the list
// ends, the consumer sees the new objects as they come, and the objects
// the list will not contain are still there.
//
// The first list queued this way is the initial list: HasSynced waits for
// its ReplaceEnd and for every key it queued to be processed.
func (f *FIFO[T]) ReplacePage(list []T, first bool) error { return f.c.replacePage(list, first) }

// ReplaceEnd completes the list begun by the last first ReplacePage: a
// Deleted delta with FinalStateUnknown for every key that was queued or
// known (KnownObjects) when that list began and that neither a page nor an
// Add, Update or Delete has mentioned since. resourceVersion is used as
// for Replace. Without a list in progress it ends an empty one.
func (f *FIFO[T]) ReplaceEnd(resourceVersion string) error {
	return f.c.replaceEnd(resourceVersion)
}

// Progress records rv, a resource version the producer has reached without
// queueing an object (a watch bookmark, an object it dropped), so that the
// batch that next empties the queue ends with a [ListProgress] item
// carrying it (one with no other item if the queue is empty now). Only a
// FIFO with [Options.ListMarks] tells progress; an empty rv says nothing.
func (f *FIFO[T]) Progress(rv string) {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.progressedLocked(rv)
	c.cond.Broadcast()
}

// WaitLen blocks until Len is at most n: n keys (events, in in-order mode)
// queued or being processed. It returns ctx.Err() if ctx ends first and ErrClosed if the FIFO
// is closed first. A producer uses it to stay at most a page or two ahead
// of the consumer.
func (f *FIFO[T]) WaitLen(ctx context.Context, n int) error { return f.c.waitLen(ctx, n) }

// Resync queues a Sync delta for every KnownObjects object whose key has
// nothing queued. Without KnownObjects it does nothing.
func (f *FIFO[T]) Resync() error { return f.c.resync() }

// Pop blocks until a key is queued (an event, in in-order mode), then
// removes it and calls process with its deltas, under the FIFO's lock: the
// process function may update the KnownObjects store but must not call the
// FIFO. Pop returns process's error, ctx.Err() if ctx ends while waiting,
// or ErrClosed once the FIFO is closed and empty. Items queued before Close
// are still delivered.
func (f *FIFO[T]) Pop(ctx context.Context, process ProcessFunc[T]) error {
	if process == nil {
		return ErrNilFunc
	}
	if f.c.cfg.listMarks {
		return ErrListMarksNeedBatch
	}
	return f.c.pop(ctx, process)
}

// PopBatch is Pop for up to Options.MaxBatch distinct keys at once. In
// in-order mode the batch stops before an event whose key it already holds,
// so each item has one delta. A batch never spans the end of the initial
// list, so isInInitialList holds for all of it or none.
//
// Unlike Pop, process runs without the FIFO's lock, so the producer keeps
// queueing while a batch is applied. The KnownObjects contract still holds:
// Replace, Resync and (in coalescing mode) Delete, which read the known
// objects, wait until process has returned, and Len counts the batch until
// then. process must not call Replace, Resync or Delete.
func (f *FIFO[T]) PopBatch(ctx context.Context, process BatchFunc[T]) error {
	if process == nil {
		return ErrNilFunc
	}
	return f.c.popBatch(ctx, process)
}

// HasSynced reports whether the initial list has been delivered: true once
// every key (event) queued by the first Replace has been popped and
// processed, or at once if Add, Update or Delete came before any Replace.
func (f *FIFO[T]) HasSynced() bool { return f.c.hasSynced() }

// Synced returns a channel that is closed when HasSynced becomes true.
func (f *FIFO[T]) Synced() <-chan struct{} { return f.c.synced }

// Close makes waiting and later Pops return ErrClosed once the queue is
// empty, and makes later writes fail with ErrClosed. It is idempotent.
func (f *FIFO[T]) Close() { f.c.close() }

// IsClosed reports whether Close was called.
func (f *FIFO[T]) IsClosed() bool { return f.c.isClosed() }

// Len returns the number of queued keys (events, in in-order mode) plus
// those of the batch a [FIFO.PopBatch] process function is applying: it
// is 0 only once everything queued has been applied.
func (f *FIFO[T]) Len() int { return f.c.len() }
