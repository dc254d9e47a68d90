package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// New is client-go's cache.New (the Cilium pattern): a Controller that runs
// a Reflector (listwatch's engine, see Reflector) filling c.Queue, any
// client-go Queue (this package's DeltaFIFO puts listwatch's FIFO behind
// it), and pops it into c.Process until the run's context ends, when the
// queue is closed. Every field of Config keeps its meaning:
// FullResyncPeriod and ShouldResync (the queue's Resync), MinWatchTimeout,
// ObjectType (objects of another type are dropped), ObjectDescription,
// WatchListPageSize, and ProcessBatch, used as client-go uses it: when the
// queue has PopBatch and client-go's InOrderInformersBatchProcess feature
// is enabled.
//
// WatchErrorHandler and WatchErrorHandlerWithContext hear every error the
// engine reports (failed lists and watches, error events, refused store
// writes; client-go's hear each failed ListAndWatch). Their *Reflector
// argument is client-go's type: it is a client-go reflector with this
// controller's name and type description that never runs (what client-go's
// DefaultWatchErrorHandler reads of it).
func New(c *cache.Config) cache.Controller {
	return &controller{config: *c}
}

// controller is New's Controller.
type controller struct {
	config cache.Config

	mu        sync.Mutex
	reflector *Reflector // of the current or last run
}

var _ cache.Controller = (*controller)(nil)

func (c *controller) Run(stopCh <-chan struct{}) {
	c.RunWithContext(wait.ContextForChannel(stopCh))
}

// RunWithContext runs the reflector and the process loop until ctx ends,
// then closes the queue and returns once both have stopped.
func (c *controller) RunWithContext(ctx context.Context) {
	logger := klog.FromContext(ctx)
	r := NewReflectorWithOptions(c.config.ListerWatcher, c.config.ObjectType, c.config.Queue, cache.ReflectorOptions{
		Logger:          &logger,
		ResyncPeriod:    c.config.FullResyncPeriod,
		MinWatchTimeout: c.config.MinWatchTimeout,
		TypeDescription: c.config.ObjectDescription,
	})
	r.ShouldResync = c.config.ShouldResync
	r.WatchListPageSize = c.config.WatchListPageSize
	if h, hc := c.config.WatchErrorHandler, c.config.WatchErrorHandlerWithContext; h != nil || hc != nil {
		view := sync.OnceValue(func() *cache.Reflector {
			return handlerReflector(c.config.ListerWatcher, c.config.ObjectType, r.Name(), r.TypeDescription())
		})
		r.onError = func(ctx context.Context, err error) {
			if h != nil {
				h(view(), err)
				return
			}
			hc(ctx, view(), err)
		}
	}
	c.mu.Lock()
	c.reflector = r
	c.mu.Unlock()

	var wg sync.WaitGroup
	wg.Go(func() { r.RunWithContext(ctx) })
	wg.Go(func() {
		<-ctx.Done()
		c.config.Queue.Close()
	})
	c.processLoop(ctx)
	wg.Wait()
}

// processLoop pops the queue into Process (or ProcessBatch) until ctx
// ends or the queue is closed: what is still queued then is not processed,
// as in client-go. An error of Process is the queue's business (client-go's
// queues drop the item); the loop goes on.
func (c *controller) processLoop(ctx context.Context) {
	bq, batch := c.config.Queue.(cache.QueueWithBatch)
	batch = batch && c.config.ProcessBatch != nil && features.FeatureGates().Enabled(features.InOrderInformersBatchProcess)
	for ctx.Err() == nil {
		var err error
		if batch {
			err = bq.PopBatch(c.config.ProcessBatch, cache.PopProcessFunc(c.config.Process))
		} else {
			_, err = c.config.Queue.Pop(cache.PopProcessFunc(c.config.Process))
		}
		if errors.Is(err, cache.ErrFIFOClosed) {
			return
		}
	}
}

// HasSynced is the queue's: true once the first list has been popped.
func (c *controller) HasSynced() bool { return c.config.Queue.HasSynced() }

func (c *controller) HasSyncedChecker() cache.DoneChecker { return c.config.Queue.HasSyncedChecker() }

// LastSyncResourceVersion is the reflector's; "" before Run.
func (c *controller) LastSyncResourceVersion() string {
	c.mu.Lock()
	r := c.reflector
	c.mu.Unlock()
	if r == nil {
		return ""
	}
	return r.LastSyncResourceVersion()
}

// NewInformer is client-go's cache.NewInformer on listwatch's engines: see
// NewInformerWithOptions.
//
// Deprecated: as client-go's, use NewInformerWithOptions.
func NewInformer(lw cache.ListerWatcher, objType runtime.Object, resyncPeriod time.Duration, h cache.ResourceEventHandler) (cache.Store, cache.Controller) {
	return NewInformerWithOptions(cache.InformerOptions{ListerWatcher: lw, ObjectType: objType, ResyncPeriod: resyncPeriod, Handler: h})
}

// NewIndexerInformer is client-go's cache.NewIndexerInformer on listwatch's
// engines: see NewInformerWithOptions.
//
// Deprecated: as client-go's, use NewInformerWithOptions.
func NewIndexerInformer(lw cache.ListerWatcher, objType runtime.Object, resyncPeriod time.Duration, h cache.ResourceEventHandler, indexers cache.Indexers) (cache.Indexer, cache.Controller) {
	st, c := NewInformerWithOptions(cache.InformerOptions{ListerWatcher: lw, ObjectType: objType, ResyncPeriod: resyncPeriod, Handler: h, Indexers: indexers})
	return st.(cache.Indexer), c
}

// NewTransformingInformer is client-go's cache.NewTransformingInformer on
// listwatch's engines: see NewInformerWithOptions.
//
// Deprecated: as client-go's, use NewInformerWithOptions.
func NewTransformingInformer(lw cache.ListerWatcher, objType runtime.Object, resyncPeriod time.Duration, h cache.ResourceEventHandler, transformer cache.TransformFunc) (cache.Store, cache.Controller) {
	return NewInformerWithOptions(cache.InformerOptions{ListerWatcher: lw, ObjectType: objType, ResyncPeriod: resyncPeriod, Handler: h, Transform: transformer})
}

// NewTransformingIndexerInformer is client-go's
// cache.NewTransformingIndexerInformer on listwatch's engines: see
// NewInformerWithOptions.
//
// Deprecated: as client-go's, use NewInformerWithOptions.
func NewTransformingIndexerInformer(lw cache.ListerWatcher, objType runtime.Object, resyncPeriod time.Duration, h cache.ResourceEventHandler, indexers cache.Indexers, transformer cache.TransformFunc) (cache.Indexer, cache.Controller) {
	st, c := NewInformerWithOptions(cache.InformerOptions{ListerWatcher: lw, ObjectType: objType, ResyncPeriod: resyncPeriod, Handler: h, Indexers: indexers, Transform: transformer})
	return st.(cache.Indexer), c
}

// NewInformerWithOptions is client-go's cache.NewInformerWithOptions with
// every piece listwatch's: the store (NewIndexer, keyed by
// DeletionHandlingMetaNamespaceKeyFunc), the queue (NewDeltaFIFOWithOptions
// with the store as known objects, Replaced deltas and options.Transform)
// and the controller (New). As in client-go, the handler is called from
// the process loop, after the store has taken the change and before the
// next one is popped, so the store never runs ahead of the handler;
// HasSynced turns true once the first list has been handed to the handler;
// a resync hands every cached object to OnUpdate(obj, obj). A nil Handler
// is allowed (the store is filled, nothing is called).
//
// Logger is used; MinWatchTimeout reaches the reflector.
// Identifier and InformerMetricsProvider (client-go's store metrics) are
// not used: listwatch's store has its own metrics (package store).
func NewInformerWithOptions(options cache.InformerOptions) (cache.Store, cache.Controller) {
	indexers := options.Indexers
	if indexers == nil {
		indexers = cache.Indexers{}
	}
	st := NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, indexers)
	logger := klog.Background()
	if options.Logger != nil {
		logger = *options.Logger
	}
	fifo := NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
		Logger:                &logger,
		Name:                  fmt.Sprintf("DeltaFIFO %T", options.ObjectType),
		KnownObjects:          st,
		EmitDeltaTypeReplaced: true,
		Transformer:           options.Transform,
	})
	h := options.Handler
	if h == nil {
		h = cache.ResourceEventHandlerFuncs{}
	}
	return st, New(&cache.Config{
		Queue:            fifo,
		ListerWatcher:    options.ListerWatcher,
		ObjectType:       options.ObjectType,
		FullResyncPeriod: options.ResyncPeriod,
		MinWatchTimeout:  options.MinWatchTimeout,
		Process: func(obj any, isInInitialList bool) error {
			deltas, ok := obj.(cache.Deltas)
			if !ok {
				return fmt.Errorf("process: got a %T, want cache.Deltas", obj)
			}
			return applyDeltas(st, h, deltas, isInInitialList)
		},
	})
}

// applyDeltas writes one key's deltas into st and tells h, each in turn:
// an object st holds is an update, one it does not an add, a deletion is
// passed on as it came (a cache.DeletedFinalStateUnknown for one a relist
// found gone).
func applyDeltas(st cache.Store, h cache.ResourceEventHandler, deltas cache.Deltas, isInInitialList bool) error {
	for _, d := range deltas {
		switch d.Type {
		case cache.Sync, cache.Replaced, cache.Added, cache.Updated:
			if old, exists, err := st.Get(d.Object); err == nil && exists {
				if err := st.Update(d.Object); err != nil {
					return err
				}
				h.OnUpdate(old, d.Object)
				continue
			}
			if err := st.Add(d.Object); err != nil {
				return err
			}
			h.OnAdd(d.Object, isInInitialList)
		case cache.Deleted:
			if err := st.Delete(d.Object); err != nil {
				return err
			}
			h.OnDelete(d.Object)
		}
	}
	return nil
}

// NewSharedInformer is client-go's cache.NewSharedInformer:
// NewSharedIndexInformer without indexers.
func NewSharedInformer(lw cache.ListerWatcher, exampleObject runtime.Object, defaultEventHandlerResyncPeriod time.Duration) cache.SharedInformer {
	return NewSharedIndexInformer(lw, exampleObject, defaultEventHandlerResyncPeriod, cache.Indexers{})
}
