package cache

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/naming"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/store"
)

// Reflector is client-go's cache.Reflector on listwatch's List-then-Watch
// engine (package reflector): it keeps any client-go store in step with
// the server, with client-go's store semantics. Code that names
// *cache.Reflector, reads or sets its exported fields or calls its methods
// keeps compiling; a watch error handler written as a function of
// *cache.Reflector does not (client-go's WatchErrorHandler names
// client-go's type: docs/clientgo.md).
//
// The store is written from one goroutine, as by client-go's reflector:
// Replace with every listed object when a list completes (the engine's
// paginated or streaming list, its relists after a 410 Gone), Add, Update
// and Delete for watch events, and, every resync period, Resync from
// another goroutine when ShouldResync is nil or returns true. A store that
// implements client-go's ResourceVersionUpdater is told every resource
// version the reflector reaches (a list's, an event's, a bookmark's); one
// that implements ReflectorBookmarkStore is told each bookmark.
//
// Differences from client-go's, all in how failures are retried:
// ListAndWatch does not return when a watch ends or a list fails (the
// engine relists, rewatches and backs off itself, see package reflector),
// only when its context ends, so Run and ListAndWatch do the same; the
// resync period runs on across relists (client-go's starts it again with
// each list); MaxInternalErrorRetryDuration is not read (internal errors
// are retried with backoff, as every other). There is no way to set a
// watch error handler on a Reflector, as in client-go; the engine logs
// and counts every error (package reflector). A watch event of another type than the
// expected one is dropped with an error, as client-go's; a listed object
// of another type is dropped too (client-go's would store it).
type Reflector struct {
	// WatchListPageSize is the list page size; 0 means 500 (client-go's
	// pager default). It is read when a run starts.
	WatchListPageSize int64
	// ShouldResync is asked every resync period whether to call the
	// store's Resync; nil means always.
	ShouldResync func() bool
	// MaxInternalErrorRetryDuration is accepted for compatibility and not
	// read: the engine retries internal errors with its backoff.
	MaxInternalErrorRetryDuration time.Duration

	name, typeDescription string
	lw                    cache.ListerWatcherWithContext
	store                 cache.ReflectorStore
	expectedType          reflect.Type
	expectedGVK           *schema.GroupVersionKind
	resyncPeriod          time.Duration
	minWatchTimeout       time.Duration
	backoff               reflector.Backoff
	watchList             reflector.WatchListMode
	clock                 clock.Clock
	logger                *klog.Logger
	// onError, when set, hears every error the engine reports (the
	// Controller's WatchErrorHandler); otherwise the engine's log line is
	// all.
	onError func(ctx context.Context, err error)

	mu sync.Mutex
	// engine is the engine of the current or last run; nil before one.
	engine *reflector.Reflector[store.Object]
}

// clientGoBackoff is the drop-ins' backoff: the reflector's defaults
// (client-go's), with 401, 403 and 404 retried on the same schedule as any
// failure, as client-go's reflector retries them, rather than no sooner
// than listwatch's Backoff.Slow. A test that serves a 404 and then the
// list (kube-controller-manager's garbage collector's) syncs as soon as
// with client-go.
var clientGoBackoff = reflector.Backoff{Slow: -1}

// clientGoWatchList is the drop-ins' streaming-list mode, as client-go
// decides it: its WatchListClient feature (on by default) allows them,
// then the source must support them (WatchListAuto). Tests turn the
// feature off to have their fake clients listed (kube-controller-manager's
// devicetainteviction tests).
func clientGoWatchList() reflector.WatchListMode {
	if !features.FeatureGates().Enabled(features.WatchListClient) {
		return reflector.WatchListOff
	}
	return reflector.WatchListAuto
}

// packageDir is this package's source directory, which a reflector's
// default name skips (client-go's skips its own) to name the caller.
var packageDir = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file) + "/"
}()

// NewReflector is client-go's cache.NewReflector on listwatch's engine; see
// NewReflectorWithOptions.
func NewReflector(lw cache.ListerWatcher, expectedType interface{}, store cache.ReflectorStore, resyncPeriod time.Duration) *Reflector {
	return NewReflectorWithOptions(lw, expectedType, store, cache.ReflectorOptions{ResyncPeriod: resyncPeriod})
}

// NewNamedReflector is client-go's cache.NewNamedReflector on listwatch's
// engine; see NewReflectorWithOptions.
func NewNamedReflector(name string, lw cache.ListerWatcher, expectedType interface{}, store cache.ReflectorStore, resyncPeriod time.Duration) *Reflector {
	return NewReflectorWithOptions(lw, expectedType, store, cache.ReflectorOptions{Name: name, ResyncPeriod: resyncPeriod})
}

// NewNamespaceKeyedIndexerAndReflector is client-go's function of the same
// name: an indexer keyed and indexed by namespace (NewIndexer) and a
// Reflector that fills it.
func NewNamespaceKeyedIndexerAndReflector(lw cache.ListerWatcher, expectedType interface{}, resyncPeriod time.Duration) (indexer cache.Indexer, reflector *Reflector) {
	indexer = NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	return indexer, NewReflector(lw, expectedType, indexer, resyncPeriod)
}

// NewReflectorWithOptions is client-go's cache.NewReflectorWithOptions on
// listwatch's engine, which lists and watches through lw and writes into
// store with client-go's semantics (see Reflector). Every option keeps its
// meaning: Name (default: the caller's file:line), TypeDescription,
// ResyncPeriod, MinWatchTimeout (below 5m ignored; watches last between it
// and twice it), Clock, Backoff (its Duration, Cap, Factor and Jitter; the
// run is reset after 2m without failure, as client-go's) and Logger. An
// *unstructured.Unstructured expectedType with a kind admits only that
// kind. Streaming lists are used, as by client-go's, when client-go's
// WatchListClient feature is enabled (the default) and lw supports them.
func NewReflectorWithOptions(lw cache.ListerWatcher, expectedType interface{}, store cache.ReflectorStore, options cache.ReflectorOptions) *Reflector {
	r := &Reflector{
		name:            options.Name,
		typeDescription: options.TypeDescription,
		lw:              reflector.FromListerWatcher(lw),
		store:           store,
		expectedType:    reflect.TypeOf(expectedType),
		resyncPeriod:    options.ResyncPeriod,
		clock:           options.Clock,
		logger:          options.Logger,
	}
	r.watchList = clientGoWatchList()
	if r.name == "" {
		r.name = naming.GetNameFromCallsite(packageDir, "client-go/tools/cache/")
	}
	if r.clock == nil {
		r.clock = clock.RealClock{}
	}
	if options.MinWatchTimeout > 5*time.Minute {
		r.minWatchTimeout = options.MinWatchTimeout
	}
	r.backoff = clientGoBackoff
	if b := options.Backoff; b != nil {
		r.backoff = reflector.Backoff{Initial: b.Duration, Max: b.Cap, Factor: b.Factor, Jitter: b.Jitter, Slow: clientGoBackoff.Slow}
		if b.Jitter <= 0 {
			r.backoff.Jitter = -1 // client-go's 0 means none; the engine's means its default
		}
	}
	if u, ok := expectedType.(*unstructured.Unstructured); ok {
		if gvk := u.GroupVersionKind(); !gvk.Empty() {
			r.expectedGVK = &gvk
		}
	}
	if r.typeDescription == "" {
		switch {
		case expectedType == nil:
			r.typeDescription = "<unspecified>"
		case r.expectedGVK != nil:
			r.typeDescription = r.expectedGVK.String()
		default:
			r.typeDescription = r.expectedType.String()
		}
	}
	return r
}

// Name is the reflector's name (ReflectorOptions.Name or the caller's
// file:line).
func (r *Reflector) Name() string { return r.name }

// TypeDescription names the type the reflector stores, for display.
func (r *Reflector) TypeDescription() string { return r.typeDescription }

// LastSyncResourceVersion is the resource version of the last list, event
// or bookmark written to the store by the current or last run; "" before
// the first list completes.
func (r *Reflector) LastSyncResourceVersion() string {
	r.mu.Lock()
	e := r.engine
	r.mu.Unlock()
	if e == nil {
		return ""
	}
	return e.LastSyncResourceVersion()
}

// Run lists and watches until stopCh is closed; see RunWithContext.
func (r *Reflector) Run(stopCh <-chan struct{}) {
	r.RunWithContext(wait.ContextForChannel(stopCh))
}

// RunWithContext lists and watches until ctx is cancelled, then returns
// once the watch is stopped and every goroutine of the run has ended.
func (r *Reflector) RunWithContext(ctx context.Context) {
	if err := r.ListAndWatchWithContext(ctx); err != nil {
		klog.FromContext(ctx).Error(err, "Reflector did not start", "reflector", r.name)
	}
}

// ListAndWatch is ListAndWatchWithContext until stopCh is closed.
func (r *Reflector) ListAndWatch(stopCh <-chan struct{}) error {
	return r.ListAndWatchWithContext(wait.ContextForChannel(stopCh))
}

// ListAndWatchWithContext lists, then watches from the list's resource
// version, relisting and rewatching as needed, until ctx is cancelled;
// then it returns nil. Each call starts with a list, from the resource
// version the last call reached (as client-go's). Unlike
// client-go's, it does not return when a watch ends or a list fails: the
// engine retries those itself, with backoff. It returns an error only if
// the engine cannot be built (a Backoff whose Factor is in (0, 1)).
func (r *Reflector) ListAndWatchWithContext(ctx context.Context) error {
	if r.logger != nil {
		ctx = klog.NewContext(ctx, *r.logger)
	}
	ctx = klog.NewContext(ctx, klog.LoggerWithName(klog.FromContext(ctx), r.name))
	cfg := reflector.Config[store.Object]{
		PageSize:        r.WatchListPageSize,
		MinWatchTimeout: r.minWatchTimeout,
		Backoff:         r.backoff,
		ExpectedGVK:     r.expectedGVK,
		WatchList:       r.watchList,
		// The user's store keys; nameless objects are not dropped, as in
		// client-go, whatever it does with them.
		NamelessKeys: true,
	}
	r.mu.Lock()
	if r.engine != nil {
		// A run after an earlier one lists from where that one was, as
		// client-go's reflector does.
		st := r.engine.Status()
		cfg.ResumeResourceVersion, cfg.ResumeUnavailable = st.LastSyncResourceVersion, st.ResourceVersionUnavailable
	}
	r.mu.Unlock()
	opts := reflector.Options[store.Object]{
		Config: cfg,
		Name:   r.name,
		Source: r.lw,
		Store:  &storeSink{r: r, s: r.store, logger: klog.FromContext(ctx)},
		Clock:  r.clock,
	}
	if r.onError != nil {
		opts.OnError = func(ctx context.Context, _ reflector.Reason, err error) { r.onError(ctx, err) }
	}
	e, err := reflector.New(opts)
	if err != nil {
		return fmt.Errorf("reflector %s: %w", r.name, err)
	}
	r.mu.Lock()
	r.engine = e
	r.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	if r.resyncPeriod > 0 {
		wg.Go(func() { r.resyncLoop(ctx, e) })
	}
	_ = e.Run(ctx) // fails only when run twice; e is new
	cancel()
	wg.Wait()
	return nil
}

// resyncLoop calls the store's Resync every resync period, when
// ShouldResync allows, until ctx ends. A failed Resync is logged and
// starts a new list (client-go's ends its ListAndWatch, which lists
// again), so that the store is rebuilt from the server.
func (r *Reflector) resyncLoop(ctx context.Context, e *reflector.Reflector[store.Object]) {
	logger := klog.FromContext(ctx)
	for {
		t := r.clock.NewTimer(r.resyncPeriod)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		if r.ShouldResync == nil || r.ShouldResync() {
			logger.V(4).Info("Forcing resync", "reflector", r.name)
			if err := r.store.Resync(); err != nil {
				logger.Error(err, "Resync failed; listing again", "reflector", r.name)
				e.Relist()
			}
		}
	}
}

// handlerReflector is what a client-go watch error handler is handed in
// place of a listwatch reflector: client-go's Reflector with its name and
// type description (what client-go's DefaultWatchErrorHandler reads),
// never run.
func handlerReflector(lw cache.ListerWatcher, example any, name, typeDescription string) *cache.Reflector {
	return cache.NewReflectorWithOptions(lw, example, cache.NewStore(cache.MetaNamespaceKeyFunc),
		cache.ReflectorOptions{Name: name, TypeDescription: typeDescription})
}

// storeSink is the engine's store: it writes into a client-go store with
// client-go's reflector semantics (see Reflector).
type storeSink struct {
	r      *Reflector
	s      cache.ReflectorStore
	logger klog.Logger
}

var (
	_ reflector.Store[store.Object]    = (*storeSink)(nil)
	_ reflector.ResourceVersionUpdater = (*storeSink)(nil)
)

// check refuses an object of another type than the expected one.
func (k *storeSink) check(obj store.Object) error {
	if t := k.r.expectedType; t != nil && reflect.TypeOf(obj) != t {
		return fmt.Errorf("reflector %s: unexpected object of type %T, want %v", k.r.name, obj, t)
	}
	return nil
}

func (k *storeSink) Add(obj store.Object) error {
	return k.write(k.s.Add, obj)
}

func (k *storeSink) Update(obj store.Object) error {
	return k.write(k.s.Update, obj)
}

func (k *storeSink) Delete(obj store.Object) error {
	return k.write(k.s.Delete, obj)
}

func (k *storeSink) write(op func(any) error, obj store.Object) error {
	if err := k.check(obj); err != nil {
		return err
	}
	// Read before the write: once in the store (a queue), the object is
	// its consumer's, which may change it (client-go's reflector reads it
	// first too).
	rv := obj.GetResourceVersion()
	err := op(obj)
	k.reached(rv)
	return err
}

// Replace hands the list to the store; objects of another type are
// dropped and logged.
func (k *storeSink) Replace(items []store.Object, resourceVersion string) error {
	list := make([]any, 0, len(items))
	for _, obj := range items {
		if err := k.check(obj); err != nil {
			k.logger.Error(err, "Dropped a listed object", "object", klog.KObj(obj))
			continue
		}
		list = append(list, obj)
	}
	if err := k.s.Replace(list, resourceVersion); err != nil {
		return err
	}
	k.reached(resourceVersion)
	return nil
}

// UpdateResourceVersion hears a bookmark.
func (k *storeSink) UpdateResourceVersion(resourceVersion string) {
	if b, ok := k.s.(cache.ReflectorBookmarkStore); ok {
		if err := b.Bookmark(resourceVersion); err != nil {
			k.logger.Error(err, "Store refused a bookmark", "resourceVersion", resourceVersion)
		}
	}
	k.reached(resourceVersion)
}

// reached tells a store that tracks the reflector's resource version.
func (k *storeSink) reached(resourceVersion string) {
	if u, ok := k.s.(cache.ResourceVersionUpdater); ok {
		u.UpdateResourceVersion(resourceVersion)
	}
}
