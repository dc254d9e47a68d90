package deltafifo

import (
	"context"

	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// DropIn is client-go's *cache.DeltaFIFO on this package's engine (over
// any value, keyed by the caller's key function): the engine of
// clientgo/tools/cache's DeltaFIFO, which is its public home, with
// client-go's names and documentation. Code written for client-go uses
// that package; DropIn is exported only so that it can.
type DropIn struct {
	// c is the engine, in coalescing mode; never nil.
	c *core[any]
	// co is c's queue: Pop and PopBatch take from it directly.
	co *coalescer[any]
	// transformer is opts.Transformer, returned by Transformer().
	transformer cache.TransformFunc
}

var (
	_ cache.QueueWithBatch    = (*DropIn)(nil)
	_ cache.TransformingStore = (*DropIn)(nil)
	_ cache.DoneChecker       = (*DropIn)(nil)
)

// NewDropIn is client-go's cache.NewDeltaFIFOWithOptions on this package's
// engine: see [DropIn].
func NewDropIn(opts cache.DeltaFIFOOptions) *DropIn {
	name := opts.Name
	if name == "" {
		name = "DeltaFIFO"
	}
	logger := klog.Background()
	if opts.Logger != nil {
		logger = *opts.Logger
	}
	keyOf := opts.KeyFunction
	if keyOf == nil {
		keyOf = cache.MetaNamespaceKeyFunc
	}
	cfg := config[any]{
		name:            name,
		logger:          klog.LoggerWithName(logger, name),
		keyOf:           keyOf,
		unwrap:          unwrapTombstone,
		invalid:         func(obj any, err error) error { return cache.KeyError{Obj: obj, Err: err} },
		transformFailed: func(err error) error { return err },
		closedErr:       cache.ErrFIFOClosed,
		replaceType:     Sync,
	}
	if opts.Transformer != nil {
		cfg.transform = opts.Transformer
	}
	if opts.EmitDeltaTypeReplaced {
		cfg.replaceType = Replaced
	}
	if opts.KnownObjects != nil {
		cfg.known = cacheKnown{opts.KnownObjects}
	}
	c := newCore(cfg)
	return &DropIn{c: c, co: c.q.(*coalescer[any]), transformer: opts.Transformer}
}

// unwrapTombstone recognises a DeletedFinalStateUnknown handed to the FIFO.
func unwrapTombstone(obj any) (string, any, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Key, t.Obj, true
	}
	return "", nil, false
}

// cacheKnown adapts a cache.KeyListerGetter to the core's view.
type cacheKnown struct{ k cache.KeyListerGetter }

func (c cacheKnown) ListKeys() []string { return c.k.ListKeys() }

func (c cacheKnown) GetByKey(key string) (any, bool, error) { return c.k.GetByKey(key) }

var cacheDeltaTypes = [...]cache.DeltaType{
	Added:    cache.Added,
	Updated:  cache.Updated,
	Deleted:  cache.Deleted,
	Replaced: cache.Replaced,
	Sync:     cache.Sync,
}

// toCacheDelta converts d, re-wrapping an unknown final state in client-go's
// DeletedFinalStateUnknown.
func toCacheDelta(key string, d Delta[any]) cache.Delta {
	obj := d.Object
	if d.FinalStateUnknown {
		obj = cache.DeletedFinalStateUnknown{Key: key, Obj: d.Object}
	}
	return cache.Delta{Type: cacheDeltaTypes[d.Type], Object: obj}
}

// toCacheDeltas copies ds into a new cache.Deltas the caller owns.
func toCacheDeltas(key string, ds []Delta[any]) cache.Deltas {
	out := make(cache.Deltas, len(ds))
	for i, d := range ds {
		out[i] = toCacheDelta(key, d)
	}
	return out
}

// Add implements cache.Queue.
func (q *DropIn) Add(obj any) error { return q.c.write(Added, obj) }

// Update implements cache.Queue.
func (q *DropIn) Update(obj any) error { return q.c.write(Updated, obj) }

// Delete implements cache.Queue.
func (q *DropIn) Delete(obj any) error { return q.c.write(Deleted, obj) }

// Replace implements cache.Queue.
func (q *DropIn) Replace(list []any, _ string) error { return q.c.replace(list, "") }

// Resync implements cache.Queue.
func (q *DropIn) Resync() error { return q.c.resync() }

// HasSynced implements cache.Queue.
func (q *DropIn) HasSynced() bool { return q.c.hasSynced() }

// HasSyncedChecker implements cache.Queue.
func (q *DropIn) HasSyncedChecker() cache.DoneChecker { return q }

// Name implements cache.DoneChecker.
func (q *DropIn) Name() string { return q.c.cfg.name }

// Done implements cache.DoneChecker.
func (q *DropIn) Done() <-chan struct{} { return q.c.synced }

// Close implements cache.Queue.
func (q *DropIn) Close() { q.c.close() }

// IsClosed reports whether Close was called.
func (q *DropIn) IsClosed() bool { return q.c.isClosed() }

// KeyOf is client-go's DeltaFIFO.KeyOf: the FIFO's key function, applied
// to the newest object of a Deltas or to what a DeletedFinalStateUnknown
// wraps (its key as it says).
func (q *DropIn) KeyOf(obj any) (string, error) {
	if ds, ok := obj.(cache.Deltas); ok {
		if len(ds) == 0 {
			return "", cache.KeyError{Obj: obj, Err: cache.ErrZeroLengthDeltasObject}
		}
		obj = ds.Newest().Object
	}
	if k, _, ok := unwrapTombstone(obj); ok {
		return k, nil
	}
	key, err := q.c.cfg.keyOf(obj)
	if err != nil {
		return "", cache.KeyError{Obj: obj, Err: err}
	}
	return key, nil
}

// Transformer implements cache.TransformingStore.
func (q *DropIn) Transformer() cache.TransformFunc { return q.transformer }

// Pop implements cache.Queue: it blocks until a key is queued, removes it,
// and calls process with the key's cache.Deltas under the FIFO's lock.
func (q *DropIn) Pop(process cache.PopProcessFunc) (any, error) {
	c := q.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.waitLocked(context.Background()); err != nil {
		return nil, err
	}
	return q.popOneLocked(process)
}

func (q *DropIn) popOneLocked(process cache.PopProcessFunc) (any, error) {
	c := q.c
	initial := !c.syncedClosed
	key, e := q.co.take()
	var item any = toCacheDeltas(key, e.deltas) // boxed once, shared by process and the result
	q.co.recycle(e)
	err := process(item, initial)
	c.processedLocked(1, false)
	return item, err
}

// PopBatch implements cache.QueueWithBatch. A batch is a run of leading keys
// that each have exactly one delta (client-go's batch consumers expect one
// delta per distinct key); a leading key with several deltas, or a run of
// one, goes to processSingle as a cache.Deltas.
func (q *DropIn) PopBatch(processBatch cache.ProcessBatchFunc, processSingle cache.PopProcessFunc) error {
	c := q.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.waitLocked(context.Background()); err != nil {
		return err
	}
	limit := c.batchLimitLocked(false)
	n := 0
	for n < limit && len(q.co.order.At(n).e.deltas) == 1 {
		n++
	}
	if n <= 1 {
		_, err := q.popOneLocked(processSingle)
		return err
	}
	initial := !c.syncedClosed
	batch := make([]cache.Delta, n)
	for i := range batch {
		key, e := q.co.take()
		batch[i] = toCacheDelta(key, e.deltas[0])
		q.co.recycle(e)
	}
	err := processBatch(batch, initial)
	c.processedLocked(n, false)
	return err
}
