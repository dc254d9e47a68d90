package cache

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/internal/dropin"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/store"
)

// NewSharedIndexInformer is a drop-in for client-go's
// cache.NewSharedIndexInformer: the same arguments, client-go's interface,
// listwatch's engine underneath. Handlers get every notification in order
// (as client-go delivers them), each on its own goroutine; deletions noticed
// by a relist arrive as cache.DeletedFinalStateUnknown.
//
// A handler panic is recovered and handed to client-go's
// utilruntime.PanicHandlers (by default they log "Observed a panic" with
// the stack; crash reporters hook in there), then the handler gets the next
// notification. utilruntime.ReallyCrash is ignored: client-go's informer
// re-panics when it is true (the default), taking down the process and
// every other informer and handler in it; the drop-in never does, as
// client-go with ReallyCrash false, but without its one-second pause
// before the next notification. Only the call that panicked is lost.
//
// An object that is not of exampleObject's type (a *corev1.ConfigMap on a
// watch of Pods) is dropped and logged, as client-go's reflector drops it
// from a watch; the drop-in also drops it from a list, where client-go
// would cache it. An unstructured example
// object with a kind admits only objects of that group, version and kind.
func NewSharedIndexInformer(lw cache.ListerWatcher, exampleObject runtime.Object, defaultResync time.Duration, indexers cache.Indexers) cache.SharedIndexInformer {
	return NewSharedIndexInformerWithOptions(lw, exampleObject, cache.SharedIndexInformerOptions{ResyncPeriod: defaultResync, Indexers: indexers})
}

// NewSharedIndexInformerWithOptions is the drop-in for client-go's function
// of the same name.
func NewSharedIndexInformerWithOptions(lw cache.ListerWatcher, exampleObject runtime.Object, options cache.SharedIndexInformerOptions) cache.SharedIndexInformer {
	return NewObservedSharedIndexInformer(lw, exampleObject, options, Observers{})
}

// NewObservedSharedIndexInformer is [NewSharedIndexInformerWithOptions]
// reporting to obs: a listwatch extension (client-go has no such
// function), for code that exports the drop-in informer's reflector
// counters and processing times, as package crcache does with
// informer/promprovider.
func NewObservedSharedIndexInformer(lw cache.ListerWatcher, exampleObject runtime.Object, options cache.SharedIndexInformerOptions, obs Observers) cache.SharedIndexInformer {
	name := options.ObjectDescription
	if name == "" {
		name = fmt.Sprintf("%T", exampleObject)
	}
	c := &listwatchInformer{lw: lw, example: exampleObject, name: name, defaultResync: options.ResyncPeriod}
	// An unstructured example with a kind accepts only that kind, as in
	// client-go; the reflector drops and reports the others.
	rcfg := reflector.Config[store.Object]{Metrics: obs.Reflector, Backoff: clientGoBackoff, WatchList: clientGoWatchList()}
	if u, ok := exampleObject.(*unstructured.Unstructured); ok {
		if gvk := u.GroupVersionKind(); !gvk.Empty() {
			rcfg.ExpectedGVK = &gvk
		}
	}
	quirks := &dropin.Quirks[store.Object]{
		SyncingHandlers: true,
		OnPanic:         clientGoPanicHandlers,
		Store:           func(st any) { c.indexer = &indexerView{s: st.(*store.Store[store.Object])} },
	}
	if t := reflect.TypeOf(exampleObject); t != nil {
		quirks.Check = func(obj store.Object) error {
			if got := reflect.TypeOf(obj); got != t {
				return fmt.Errorf("expected an object of type %v, got %v", t, got)
			}
			return nil
		}
	}
	inf, err := informer.New(informer.Options[store.Object]{
		Name:              name,
		Source:            reflector.FromListerWatcher(lw),
		Reflector:         rcfg,
		NamelessKeys:      true,
		Transform:         c.transform,
		OrderedQueue:      true,
		Delivery:          informer.InOrder,
		ResyncPeriod:      options.ResyncPeriod,
		WatchErrorHandler: c.watchError,
		Processing:        obs.Processing,
		Quirks:            quirks,
	})
	if err != nil {
		// New fails only on missing options or bad indexers, neither possible here.
		panic(fmt.Sprintf("cache: building the drop-in informer: %v", err))
	}
	c.inf = inf
	if err := c.indexer.AddIndexers(options.Indexers); err != nil {
		klog.Background().Error(err, "cache: indexers refused", "informer", name)
	}
	return c
}

// clientGoPanicHandlers hands a handler panic to client-go's
// utilruntime.PanicHandlers, which users hook for crash reporting; the
// first one, by default, logs "Observed a panic" with the stack, using the
// logger in ctx. utilruntime.ReallyCrash is not honoured: the panic is not
// raised again. See NewSharedIndexInformer.
//
// As client-go's HandleCrash does, the logger is given the call depth that
// makes a handler's log line name the line that panicked: from a panic
// handler's log call, this function, listener.panicked, guarded.recover,
// the runtime's panic and then the panicking function.
func clientGoPanicHandlers(ctx context.Context, r any) {
	const framesToPanic = 5
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithCallDepth(framesToPanic))
	for _, fn := range utilruntime.PanicHandlers {
		fn(ctx, r)
	}
}

// listwatchInformer implements cache.SharedIndexInformer on
// informer.Informer[store.Object].
type listwatchInformer struct {
	inf           *informer.Informer[store.Object]
	indexer       *indexerView
	lw            cache.ListerWatcher
	example       runtime.Object
	name          string
	defaultResync time.Duration

	// transformFn and errorHandler may be set until Run; read on every call.
	transformFn  atomic.Pointer[cache.TransformFunc]
	errorHandler atomic.Pointer[cache.WatchErrorHandlerWithContext]
	// reflectorOnce builds the *cache.Reflector handed to error handlers,
	// which expect one (client-go's default handler reads its name).
	reflectorOnce sync.Once
	reflectorView *cache.Reflector
	// started is set by Run: SetTransform and the error handler may be
	// set only before.
	started atomic.Bool
}

var _ cache.SharedIndexInformer = (*listwatchInformer)(nil)

// Snapshot implements informer.Snapshotter: metrics providers
// (informer/promprovider) and status pages read the engine's figures
// through it.
func (c *listwatchInformer) Snapshot() informer.Snapshot { return c.inf.Snapshot() }

// Status is the informer's reflector's health (informer.Informer.Status),
// for code that waits for a sync and wants the reason it has not come.
func (c *listwatchInformer) Status() reflector.Status { return c.inf.Status() }

// Informer returns the listwatch informer under the drop-in, e.g. for
// shard.Attach (crcache's sharding attaches its sources through it):
// reached by a type assertion to interface{ Informer()
// *informer.Informer[store.Object] } on what NewSharedIndexInformer
// returns.
func (c *listwatchInformer) Informer() *informer.Informer[store.Object] { return c.inf }

var errStarted = errors.New("informer has already started")

func (c *listwatchInformer) transform(obj store.Object) (store.Object, error) {
	t := c.transformFn.Load()
	if t == nil {
		return obj, nil
	}
	out, err := (*t)(obj)
	if err != nil {
		return nil, err
	}
	o, ok := out.(store.Object)
	if !ok {
		return nil, fmt.Errorf("transform returned a %T, which has no object metadata", out)
	}
	return o, nil
}

func (c *listwatchInformer) watchError(ctx context.Context, err error) {
	h := c.errorHandler.Load()
	if h == nil {
		return
	}
	c.reflectorOnce.Do(func() {
		c.reflectorView = handlerReflector(c.lw, c.example, c.name, "")
	})
	(*h)(ctx, c.reflectorView, err)
}

func (c *listwatchInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return c.AddEventHandlerWithOptions(h, cache.HandlerOptions{})
}

func (c *listwatchInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return c.AddEventHandlerWithOptions(h, cache.HandlerOptions{ResyncPeriod: &resync})
}

// AddEventHandlerWithOptions follows client-go's resync rules: nil takes the
// informer's default, 0 means none, and an informer built without a resync
// period resyncs no handler.
func (c *listwatchInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, o cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	opts := informer.HandlerOptions{ResyncPeriod: -1}
	if c.defaultResync > 0 {
		resync := c.defaultResync
		if o.ResyncPeriod != nil {
			resync = max(*o.ResyncPeriod, 0)
		}
		if resync > 0 {
			opts.ResyncPeriod = max(resync, time.Second)
		}
	}
	if o.Logger != nil {
		opts.Logger = o.Logger
	}
	reg, err := c.inf.AddHandler(&untypedHandler{h: h}, opts)
	if err != nil {
		return nil, fmt.Errorf("handler %v was not added to shared informer because it has stopped already", h)
	}
	return &registration{reg: reg, owner: c, name: c.name}, nil
}

// RemoveEventHandler removes a handler registered on this informer;
// removing it again is harmless. A handle from another informer is
// ignored: nothing is removed and, as client-go does (its own
// TestSharedInformerRemoveForeignHandler requires it), nil is returned.
// To wait until the handler has stopped, use cache.ShutDownEventHandler.
func (c *listwatchInformer) RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(*registration)
	if !ok || r.owner != c {
		return nil
	}
	r.reg.Remove()
	return nil
}

func (c *listwatchInformer) GetStore() cache.Store           { return c.indexer }
func (c *listwatchInformer) GetIndexer() cache.Indexer       { return c.indexer }
func (c *listwatchInformer) GetController() cache.Controller { return controllerView{c} }
func (c *listwatchInformer) Run(stopCh <-chan struct{}) {
	c.RunWithContext(wait.ContextForChannel(stopCh))
}
func (c *listwatchInformer) RunWithContext(ctx context.Context) {
	c.started.Store(true)
	_ = c.inf.Run(ctx)
}
func (c *listwatchInformer) HasSynced() bool                 { return c.inf.HasSynced() }
func (c *listwatchInformer) LastSyncResourceVersion() string { return c.inf.LastSyncResourceVersion() }
func (c *listwatchInformer) IsStopped() bool                 { return c.inf.IsStopped() }

func (c *listwatchInformer) HasSyncedChecker() cache.DoneChecker {
	return doneChecker{name: c.name, done: c.inf.Synced()}
}

func (c *listwatchInformer) SetWatchErrorHandler(h cache.WatchErrorHandler) error {
	return c.SetWatchErrorHandlerWithContext(func(_ context.Context, r *cache.Reflector, err error) { h(r, err) })
}

func (c *listwatchInformer) SetWatchErrorHandlerWithContext(h cache.WatchErrorHandlerWithContext) error {
	if c.started.Load() {
		return errStarted
	}
	c.errorHandler.Store(&h)
	return nil
}

// SetTransform sets the transform applied before objects are stored; nil
// means none (controller-runtime sets nil when no transform is configured).
func (c *listwatchInformer) SetTransform(t cache.TransformFunc) error {
	if c.started.Load() {
		return errStarted
	}
	if t == nil {
		c.transformFn.Store(nil)
		return nil
	}
	c.transformFn.Store(&t)
	return nil
}

func (c *listwatchInformer) AddIndexers(indexers cache.Indexers) error {
	if c.inf.IsStopped() {
		return errors.New("indexer was not added because it has stopped already")
	}
	return c.indexer.AddIndexers(indexers)
}

// controllerView is what GetController returns: client-go's Controller
// view of the same informer.
type controllerView struct{ c *listwatchInformer }

func (cc controllerView) RunWithContext(ctx context.Context) { cc.c.RunWithContext(ctx) }
func (cc controllerView) Run(stopCh <-chan struct{})         { cc.c.Run(stopCh) }
func (cc controllerView) HasSynced() bool                    { return cc.c.HasSynced() }
func (cc controllerView) LastSyncResourceVersion() string    { return cc.c.LastSyncResourceVersion() }

// registration is a handler's client-go registration handle.
type registration struct {
	reg   *informer.Registration[store.Object]
	owner *listwatchInformer
	name  string
}

// ShutdownChan is closed once the handler will not be called again and no
// call is in progress: after RemoveEventHandler (at once if the informer
// never ran) or when the informer stops. cache.ShutDownEventHandler waits
// on it.
func (r *registration) ShutdownChan() <-chan struct{} { return r.reg.Done() }

func (r *registration) HasSynced() bool { return r.reg.HasSynced() }
func (r *registration) HasSyncedChecker() cache.DoneChecker {
	return doneChecker{name: r.name + " handler", done: r.reg.Synced()}
}

type doneChecker struct {
	name string
	done <-chan struct{}
}

func (d doneChecker) Name() string          { return d.name }
func (d doneChecker) Done() <-chan struct{} { return d.done }

// untypedHandler adapts client-go's ResourceEventHandler to
// informer.Handler: a deletion whose final state is unknown arrives
// wrapped in cache.DeletedFinalStateUnknown, with the store's key, as
// client-go handlers expect.
type untypedHandler struct {
	h cache.ResourceEventHandler
}

func (u *untypedHandler) OnAdd(obj store.Object, initial bool) { u.h.OnAdd(obj, initial) }
func (u *untypedHandler) OnUpdate(old, new store.Object)       { u.h.OnUpdate(old, new) }
func (u *untypedHandler) OnDelete(obj store.Object, unknown bool) {
	if !unknown {
		u.h.OnDelete(obj)
		return
	}
	key, _ := store.MetaNamespaceKey(obj)
	u.h.OnDelete(cache.DeletedFinalStateUnknown{Key: key, Obj: obj})
}

func (cc controllerView) HasSyncedChecker() cache.DoneChecker { return cc.c.HasSyncedChecker() }
