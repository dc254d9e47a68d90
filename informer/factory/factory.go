package factory

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/store"
)

// Options configures a Factory.
type Options struct {
	// ResyncPeriod is the default resync period of every informer's handlers.
	ResyncPeriod time.Duration
	// Delivery is the default DeliveryMode of every informer's handlers.
	Delivery informer.DeliveryMode
	// WrapSource, when set, wraps the source of every informer the factory
	// builds (after its Selection is applied): to shard the resource over
	// replicas, it returns a shard.Source around src, one per informer
	// (docs/sharding.md). A wrapped source that has a RelistWith(func())
	// method ([RelistHook]; shard.Source has one) is given the informer's
	// Relist, so a change of its part relists at once. resource is For's.
	WrapSource func(resource string, src cache.ListerWatcherWithContext) cache.ListerWatcherWithContext
}

// RelistHook is implemented by a source that changes what it serves and
// needs its informer to relist then (shard.Source): the informer's builder
// (a Factory, or the caller of informer.New) hands it
// [informer.Informer.Relist].
type RelistHook interface {
	RelistWith(relist func())
}

// Selection picks the objects an informer caches. Informers are shared by
// object type, resource and Selection: asking twice for the same gives the
// same informer.
type Selection struct {
	// Namespace restricts the informer to one namespace; "" means all.
	Namespace string
	// LabelSelector and FieldSelector filter on the server.
	LabelSelector, FieldSelector string
}

// Factory hands out informers shared by type, resource and Selection,
// starts them together and waits for them to sync.
type Factory struct {
	opts Options
	// informers is the informers' lifecycle; it refuses new ones after
	// Shutdown (informer.ErrStopped).
	informers Lifecycle[factoryKey, runnable]

	// mu guards the metrics fields. Lock order: the lifecycle's lock (For
	// builds under it), then mu.
	mu sync.Mutex
	// observe is the metrics observer (Observe); nil when none is
	// attached.
	observe func(name string) Metrics
	// switches holds the metrics of every informer built without its
	// own, so that an observer attached later reaches them.
	switches []*metricsSwitch
}

type factoryKey struct {
	typ      reflect.Type
	resource string
	sel      Selection
}

func (k factoryKey) String() string {
	s := k.resource
	if k.sel.Namespace != "" {
		s += " in " + k.sel.Namespace
	}
	if k.sel.LabelSelector != "" {
		s += " labels " + k.sel.LabelSelector
	}
	if k.sel.FieldSelector != "" {
		s += " fields " + k.sel.FieldSelector
	}
	return s
}

type runnable interface {
	Run(ctx context.Context) error
	WaitForSync(ctx context.Context) error
	informer.Snapshotter
}

// New returns an empty factory.
func New(opts Options) *Factory {
	f := &Factory{opts: opts}
	f.informers.Refuse = informer.ErrStopped
	return f
}

// For returns the factory's informer for T, resource and sel, building it
// on first use with newSource (which must apply sel) and opts (Source, Name
// and unset defaults are filled in). resource names the resource, e.g.
// "pods" or a GVR's String().
func For[T store.Object](f *Factory, resource string, sel Selection, newSource func(Selection) cache.ListerWatcherWithContext, opts informer.Options[T]) (*informer.Informer[T], error) {
	key := factoryKey{typ: reflect.TypeFor[T](), resource: resource, sel: sel}
	inf, err := f.informers.Get(key, func() (runnable, error) {
		opts.Source = newSource(sel)
		if f.opts.WrapSource != nil {
			opts.Source = f.opts.WrapSource(resource, opts.Source)
		}
		if opts.Name == "" {
			opts.Name = key.String()
		}
		if opts.ResyncPeriod == 0 {
			opts.ResyncPeriod = f.opts.ResyncPeriod
		}
		if opts.Delivery == 0 {
			opts.Delivery = f.opts.Delivery
		}
		if opts.Reflector.Metrics == nil || opts.Processing == nil {
			f.mu.Lock()
			sw := f.switchLocked(opts.Name)
			f.mu.Unlock()
			if opts.Reflector.Metrics == nil {
				opts.Reflector.Metrics = sw
			}
			if opts.Processing == nil {
				opts.Processing = sw
			}
		}
		inf, err := informer.New(opts)
		if err != nil {
			return nil, err
		}
		if h, ok := opts.Source.(RelistHook); ok {
			h.RelistWith(inf.Relist)
		}
		return inf, nil
	})
	if err != nil {
		return nil, err
	}
	return inf.(*informer.Informer[T]), nil
}

// Start runs every informer not yet running, until ctx ends or Shutdown.
func (f *Factory) Start(ctx context.Context) {
	f.informers.Start(ctx, func(ctx context.Context, inf runnable) { _ = inf.Run(ctx) })
}

// WaitForCacheSync waits until every started informer has synced. On
// failure the error names each informer that did not sync and why.
func (f *Factory) WaitForCacheSync(ctx context.Context) error {
	started := f.informers.Started()
	keys := make([]factoryKey, 0, len(started))
	for key := range started {
		keys = append(keys, key)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	var errs []error
	for _, key := range keys {
		if err := started[key].WaitForSync(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
	}
	return errors.Join(errs...)
}

// Shutdown stops every informer and waits for them to return. Informers
// asked for afterwards are refused with informer.ErrStopped.
func (f *Factory) Shutdown() { f.informers.Stop() }

// selected wraps lw so every call carries sel's selectors, as a filtered
// client-go informer's tweakListOptions does.
func selected(lw cache.ListerWatcherWithContext, sel Selection) cache.ListerWatcherWithContext {
	if sel.LabelSelector == "" && sel.FieldSelector == "" {
		return lw
	}
	return &selectingSource{ListerWatcherWithContext: lw, sel: sel}
}

type selectingSource struct {
	cache.ListerWatcherWithContext
	sel Selection
}

func (s *selectingSource) apply(o metav1.ListOptions) metav1.ListOptions {
	if s.sel.LabelSelector != "" {
		o.LabelSelector = s.sel.LabelSelector
	}
	if s.sel.FieldSelector != "" {
		o.FieldSelector = s.sel.FieldSelector
	}
	return o
}

func (s *selectingSource) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	return s.ListerWatcherWithContext.ListWithContext(ctx, s.apply(o))
}

func (s *selectingSource) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return s.ListerWatcherWithContext.WatchWithContext(ctx, s.apply(o))
}

// Typed returns the factory's informer for a typed client, e.g.
//
//	pods, err := factory.Typed[*corev1.Pod, *corev1.PodList](f, "pods", sel,
//		func(ns string) reflector.Client[*corev1.PodList] { return cs.CoreV1().Pods(ns) },
//		informer.Options[*corev1.Pod]{})
func Typed[T store.Object, L runtime.Object](f *Factory, resource string, sel Selection, client func(namespace string) reflector.Client[L], opts informer.Options[T]) (*informer.Informer[T], error) {
	return For(f, resource, sel, func(s Selection) cache.ListerWatcherWithContext {
		return selected(reflector.FromClient[L](client(s.Namespace)), s)
	}, opts)
}

// Dynamic returns the factory's informer for any resource through the
// dynamic client, caching *unstructured.Unstructured.
func Dynamic(f *Factory, client dynamic.Interface, gvr schema.GroupVersionResource, sel Selection, opts informer.Options[*unstructured.Unstructured]) (*informer.Informer[*unstructured.Unstructured], error) {
	return For(f, gvr.String(), sel, func(s Selection) cache.ListerWatcherWithContext {
		return selected(reflector.FromClient[*unstructured.UnstructuredList](client.Resource(gvr).Namespace(s.Namespace)), s)
	}, opts)
}

// Metadata returns the factory's informer for any resource through the
// metadata client, caching only object metadata (*metav1.PartialObjectMetadata):
// the lightest cache when a controller needs names, labels and owners.
func Metadata(f *Factory, client metadata.Interface, gvr schema.GroupVersionResource, sel Selection, opts informer.Options[*metav1.PartialObjectMetadata]) (*informer.Informer[*metav1.PartialObjectMetadata], error) {
	return For(f, gvr.String(), sel, func(s Selection) cache.ListerWatcherWithContext {
		return selected(reflector.FromClient[*metav1.PartialObjectMetadataList](client.Resource(gvr).Namespace(s.Namespace)), s)
	}, opts)
}
