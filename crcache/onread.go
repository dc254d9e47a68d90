package crcache

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/listwatch/listwatch/ondemand"
	"github.com/listwatch/listwatch/ondemand/promondemand"
)

// OnRead makes the cache hold one type's objects whole only once they are
// read (package ondemand): the cache keeps every object's metadata (the
// type's metadata-only informer, shared with PartialObjectMetadata reads
// and watches of the type), client.Get of an object fetches it from the
// server with the caller's context on its first read and holds it from
// then on, within a budget.
//
// What each call does for such a type:
//   - Get of the typed object: held, or fetched (the server's error, a
//     404 for an object deleted meanwhile, a 403, is returned as is; an
//     object the metadata cache does not have is NotFound without a
//     request).
//   - List of the typed list: whole objects, the held ones from memory
//     and the rest in one paged list from the server (label selectors;
//     a field selector is an error).
//   - Get, List and GetInformer of PartialObjectMetadata: the metadata
//     cache, as for any type.
//   - With Options.MetricsRegisterer, its figures are exported by package
//     ondemand/promondemand, named after its resource.
//   - GetInformer and GetInformerForKind of the typed object:
//     [ErrOnRead]. Handlers of such a type get metadata: watch it with
//     builder.OnlyMetadata (or a PartialObjectMetadata source).
type OnRead struct {
	// Object is an example of the type, e.g. &corev1.Secret{}.
	Object client.Object
	// Budget, IdleAfter and Hold are ondemand.Options': the most bytes of
	// whole objects held (0 none, ondemand.Unlimited no limit), how long
	// a held object may go unread, and a label selector of objects held
	// from the start.
	Budget    int64
	IdleAfter time.Duration
	Hold      labels.Selector
}

// ErrOnRead is returned by GetInformer for a type the cache holds whole
// only on read (Options.OnRead): its handlers must ask for metadata.
var ErrOnRead = errors.New("crcache: the type's objects are held whole only on read (Options.OnRead); watch it as metadata (builder.OnlyMetadata or PartialObjectMetadata)")

// onReadCache serves the Options.OnRead types of the cache it wraps.
type onReadCache struct {
	cache.Cache
	scheme *runtime.Scheme
	reader client.Reader // uncached: the fetches
	strip  bool          // strip managedFields from fetched objects
	types  map[schema.GroupVersionKind]*onReadType
	// metrics exports the types' figures (Options.MetricsRegisterer); nil without.
	metrics *promondemand.Collector

	mu       sync.Mutex
	startCtx context.Context // Start's, once called: the Caches' Run
}

// onReadType is one OnRead type; its ondemand.Cache is built on first use.
type onReadType struct {
	conf OnRead
	gvk  schema.GroupVersionKind

	// mu serialises building c; c is set once built and read without
	// the lock by every read after.
	mu sync.Mutex
	c  atomic.Pointer[ondemand.Cache[client.Object]]
}

func newOnReadCache(inner cache.Cache, s *runtime.Scheme, reader client.Reader, strip bool, confs []OnRead, metrics *promondemand.Collector) (cache.Cache, error) {
	if len(confs) == 0 {
		return inner, nil
	}
	c := &onReadCache{Cache: inner, scheme: s, reader: reader, strip: strip, types: map[schema.GroupVersionKind]*onReadType{}, metrics: metrics}
	for _, conf := range confs {
		if conf.Object == nil {
			return nil, errors.New("crcache: an Options.OnRead without an Object")
		}
		gvk, err := apiutil.GVKForObject(conf.Object, s)
		if err != nil {
			return nil, fmt.Errorf("crcache: Options.OnRead: %w", err)
		}
		c.types[gvk] = &onReadType{conf: conf, gvk: gvk}
	}
	return c, nil
}

func (c *onReadCache) Start(ctx context.Context) error {
	c.mu.Lock()
	c.startCtx = ctx
	c.mu.Unlock()
	return c.Cache.Start(ctx)
}

func (c *onReadCache) NeedLeaderElection() bool { return needLeaderElection(c.Cache) }

// typeOf returns the OnRead type of a typed obj, nil for any other.
func (c *onReadCache) typeOf(obj runtime.Object) *onReadType {
	switch obj.(type) {
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList, runtime.Unstructured:
		return nil
	}
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return nil
	}
	if _, isList := obj.(client.ObjectList); isList {
		gvk.Kind = trimList(gvk.Kind)
	}
	return c.types[gvk]
}

func trimList(kind string) string {
	if len(kind) > 4 && kind[len(kind)-4:] == "List" {
		return kind[:len(kind)-4]
	}
	return kind
}

// cacheOf returns t's ondemand.Cache, building it (and its metadata
// informer, waiting for its sync) on first use.
func (c *onReadCache) cacheOf(ctx context.Context, t *onReadType) (*ondemand.Cache[client.Object], error) {
	if oc := t.c.Load(); oc != nil {
		return oc, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if oc := t.c.Load(); oc != nil {
		return oc, nil
	}
	c.mu.Lock()
	runCtx := c.startCtx
	c.mu.Unlock()
	if runCtx == nil {
		return nil, &cache.ErrCacheNotStarted{}
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(t.gvk)
	inf, err := c.Cache.GetInformer(ctx, m)
	if err != nil {
		return nil, err
	}
	sii, ok := inf.(toolscache.SharedIndexInformer)
	if !ok {
		return nil, fmt.Errorf("crcache: the metadata informer of %s is a %T, not a SharedIndexInformer", t.gvk, inf)
	}
	opts := ondemand.Options[client.Object]{
		Name:      t.gvk.Kind,
		Resource:  schema.GroupResource{Group: t.gvk.Group, Resource: t.gvk.Kind},
		Metadata:  ondemand.MetadataOfInformer(sii),
		Fetcher:   readerFetcher{reader: c.reader, scheme: c.scheme, gvk: t.gvk},
		Budget:    t.conf.Budget,
		IdleAfter: t.conf.IdleAfter,
		Hold:      t.conf.Hold,
	}
	if c.strip {
		opts.Transform = func(o client.Object) (client.Object, error) { o.SetManagedFields(nil); return o, nil }
	}
	if mapping, err := c.restMapping(t.gvk); err == nil {
		opts.Resource = mapping.Resource.GroupResource()
		opts.Name = mapping.Resource.Resource
	}
	if c.metrics != nil {
		opts.Metrics = c.metrics.Fetches(opts.Name)
	}
	oc, err := ondemand.New(runCtx, opts)
	if err != nil {
		return nil, err
	}
	if c.metrics != nil {
		c.metrics.Add(opts.Name, oc.Stats)
	}
	go func() { _ = oc.Run(runCtx) }()
	t.c.Store(oc)
	return oc, nil
}

func (c *onReadCache) restMapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	type mapped interface{ RESTMapper() meta.RESTMapper }
	if m, ok := c.reader.(mapped); ok {
		return m.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	return nil, errors.New("no mapper")
}

func (c *onReadCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	t := c.typeOf(obj)
	if t == nil {
		return c.Cache.Get(ctx, key, obj, opts...)
	}
	oc, err := c.cacheOf(ctx, t)
	if err != nil {
		return err
	}
	got, err := oc.Get(ctx, key.Namespace, key.Name)
	if err != nil {
		return err
	}
	return copyInto(got, obj, t.gvk)
}

func (c *onReadCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	t := c.typeOf(list)
	if t == nil {
		return c.Cache.List(ctx, list, opts...)
	}
	var lo client.ListOptions
	lo.ApplyOptions(opts)
	if lo.FieldSelector != nil && !lo.FieldSelector.Empty() {
		return fmt.Errorf("crcache: %s is held on read (Options.OnRead): its lists select by labels only, not by the field selector %q", t.gvk.Kind, lo.FieldSelector)
	}
	oc, err := c.cacheOf(ctx, t)
	if err != nil {
		return err
	}
	objs, err := oc.List(ctx, lo.Namespace, lo.LabelSelector)
	if err != nil {
		return err
	}
	items := make([]runtime.Object, len(objs))
	for i, o := range objs {
		cp := o.DeepCopyObject()
		cp.GetObjectKind().SetGroupVersionKind(t.gvk)
		items[i] = cp
	}
	return meta.SetList(list, items)
}

func (c *onReadCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if t := c.typeOf(obj); t != nil {
		return nil, fmt.Errorf("%s: %w", t.gvk.Kind, ErrOnRead)
	}
	return c.Cache.GetInformer(ctx, obj, opts...)
}

func (c *onReadCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if c.types[gvk] != nil {
		return nil, fmt.Errorf("%s: %w", gvk.Kind, ErrOnRead)
	}
	return c.Cache.GetInformerForKind(ctx, gvk, opts...)
}

// statsOf returns, for the metadata informer of gvk, the figures of its
// type's ondemand.Cache once built; nil when gvk is no OnRead type (c
// may be nil: no OnRead at all).
func (c *onReadCache) statsOf(gvk schema.GroupVersionKind) func() *ondemand.Stats {
	if c == nil || c.types[gvk] == nil {
		return nil
	}
	t := c.types[gvk]
	return func() *ondemand.Stats {
		oc := t.c.Load()
		if oc == nil {
			return nil
		}
		st := oc.Stats()
		return &st
	}
}

// OnReadStats returns the figures of the Options.OnRead type of obj, and
// false when obj's type is not held on read or not read yet.
func OnReadStats(c cache.Cache, obj client.Object) (ondemand.Stats, bool) {
	if c != nil {
		if oc, ok := c.(*onReadCache); ok {
			t := oc.typeOf(obj)
			if t == nil {
				return ondemand.Stats{}, false
			}
			oc := t.c.Load()
			if oc == nil {
				return ondemand.Stats{}, false
			}
			return oc.Stats(), true
		}
		return ondemand.Stats{}, false
	}
	return ondemand.Stats{}, false
}

// copyInto copies the shared object got into the caller's obj, as
// controller-runtime's cache does (a deep copy, with the kind set).
func copyInto(got, obj client.Object, gvk schema.GroupVersionKind) error {
	out := reflect.ValueOf(obj)
	in := reflect.ValueOf(got.DeepCopyObject())
	if out.Kind() != reflect.Pointer || out.Type() != in.Type() {
		return fmt.Errorf("crcache: cannot copy a %T into a %T", got, obj)
	}
	out.Elem().Set(in.Elem())
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return nil
}

// readerFetcher fetches objects of one kind with controller-runtime's
// uncached client.
type readerFetcher struct {
	reader client.Reader
	scheme *runtime.Scheme
	gvk    schema.GroupVersionKind
}

func (f readerFetcher) Get(ctx context.Context, namespace, name string) (client.Object, error) {
	o, err := f.scheme.New(f.gvk)
	if err != nil {
		return nil, err
	}
	obj, ok := o.(client.Object)
	if !ok {
		return nil, fmt.Errorf("crcache: a %T is not a client.Object", o)
	}
	if err := f.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

func (f readerFetcher) List(ctx context.Context, namespace string, opts metav1.ListOptions) ([]client.Object, error) {
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, err
	}
	var out []client.Object
	cont := ""
	for {
		// A new list per page: the items of the last one are kept.
		o, err := f.scheme.New(f.gvk.GroupVersion().WithKind(f.gvk.Kind + "List"))
		if err != nil {
			return nil, err
		}
		list, ok := o.(client.ObjectList)
		if !ok {
			return nil, fmt.Errorf("crcache: a %T is not a client.ObjectList", o)
		}
		lo := []client.ListOption{client.Limit(ondemand.PageSize), client.MatchingLabelsSelector{Selector: sel}}
		if namespace != "" {
			lo = append(lo, client.InNamespace(namespace))
		}
		if cont != "" {
			lo = append(lo, client.Continue(cont))
		}
		if err := f.reader.List(ctx, list, lo...); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			obj, ok := it.(client.Object)
			if !ok {
				return nil, fmt.Errorf("crcache: a %T is not a client.Object", it)
			}
			out = append(out, obj)
		}
		if cont = list.GetContinue(); cont == "" {
			return out, nil
		}
	}
}
