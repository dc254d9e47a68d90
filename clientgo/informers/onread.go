package informers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	"github.com/listwatch/listwatch/internal/nilcheck"
	"github.com/listwatch/listwatch/ondemand"
	"github.com/listwatch/listwatch/restsource"
	"github.com/listwatch/listwatch/store"
)

// OnRead configures [WithOnRead]: Budget, IdleAfter and Hold are
// ondemand.Options' (the most bytes of whole objects held, 0 none and
// ondemand.Unlimited no limit; how long a held object may go unread; a
// label selector of objects held from the start). Wait bounds a lister
// call that must fetch; default 10s.
//
// MetadataHandlers lets the informer's AddEventHandler register handlers
// that are given its metadata: each object a *metav1.PartialObjectMetadata
// (a cache.DeletedFinalStateUnknown of one when the final state is not
// known), never the type. For handlers that read only names, labels and
// owners and enqueue a key, as cert-manager's Secret handlers do (its
// SecretsFilteredCaching hands them metadata for the Secrets it does not
// label). Without it, AddEventHandler returns [ErrOnRead].
type OnRead struct {
	Budget           int64
	IdleAfter        time.Duration
	Hold             labels.Selector
	Wait             time.Duration
	MetadataHandlers bool
}

// ErrOnRead is returned by AddEventHandler on the informer of a type held
// only on read (WithOnRead): it caches metadata, and hands out nothing
// partial as whole.
var ErrOnRead = errors.New("informers: the type is held whole only on read (WithOnRead); its handlers would get metadata: use the metadata informer factory for handlers")

// onReadInformer builds obj's informer held on read: a metadata-only
// drop-in informer over restsource, and an ondemand.Cache fetching through
// the clientset's REST client, behind an Indexer that reads whole objects.
func (f *sharedInformerFactory) onReadInformer(b *builtin, obj k8sruntime.Object, o OnRead) (cache.SharedIndexInformer, error) {
	if nilcheck.Is(f.client) {
		return nil, errors.New("no clientset")
	}
	rc := b.restClient(f.client)
	if nilcheck.Is(rc) {
		return nil, errors.New("the clientset has no REST client (a fake clientset)")
	}
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return nil, err
	}
	namespace := f.namespace
	if !b.typ.Namespaced {
		namespace = metav1.NamespaceAll
	}
	lw, err := restsource.New[*metav1.PartialObjectMetadata](f.memory.Source(restsource.Options{
		Client: rc, Resource: b.gvr.Resource, Namespace: namespace, TweakListOptions: f.tweakListOptions,
		GroupVersionKind: gvks[0],
	}))
	if err != nil {
		return nil, err
	}
	meta := lwcache.NewSharedIndexInformerWithOptions(lw, &metav1.PartialObjectMetadata{}, cache.SharedIndexInformerOptions{
		Indexers:   cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		Identifier: f.informerName.WithResource(b.gvr),
	})
	fetch := restFetcher{rc: rc, gvk: gvks[0], resource: b.gvr.Resource, namespaced: b.typ.Namespaced, tweak: f.tweakListOptions}
	opts := ondemand.Options[store.Object]{Name: b.gvr.Resource, Resource: b.gvr.GroupResource(), Metadata: ondemand.MetadataOfInformer(meta),
		Fetcher: fetch, Budget: o.Budget, IdleAfter: o.IdleAfter, Hold: o.Hold}
	if f.memory.StripManagedFields {
		opts.Transform = func(o store.Object) (store.Object, error) { o.SetManagedFields(nil); return o, nil }
	}
	oc, err := ondemand.New(context.Background(), opts) //lint:allow-background the factory's informers have no context until Run
	if err != nil {
		return nil, err
	}
	if o.Wait <= 0 {
		o.Wait = 10 * time.Second
	}
	return &heldInformer{SharedIndexInformer: meta, indexer: &heldIndexer{Indexer: meta.GetIndexer(), c: oc, wait: o.Wait}, c: oc,
		metadataHandlers: o.MetadataHandlers}, nil
}

// heldInformer is the informer of a type held on read: the metadata
// informer, with the whole-object Indexer; its handlers get metadata
// with OnRead.MetadataHandlers and are refused without.
type heldInformer struct {
	cache.SharedIndexInformer
	indexer          *heldIndexer
	c                *ondemand.Cache[store.Object]
	metadataHandlers bool
}

func (i *heldInformer) refuse() (cache.ResourceEventHandlerRegistration, error) {
	klog.Background().Error(ErrOnRead, "informers: a handler was refused")
	return nil, ErrOnRead
}

func (i *heldInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	if i.metadataHandlers {
		return i.SharedIndexInformer.AddEventHandler(h)
	}
	return i.refuse()
}

func (i *heldInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	if i.metadataHandlers {
		return i.SharedIndexInformer.AddEventHandlerWithResyncPeriod(h, resync)
	}
	return i.refuse()
}

func (i *heldInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, o cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	if i.metadataHandlers {
		return i.SharedIndexInformer.AddEventHandlerWithOptions(h, o)
	}
	return i.refuse()
}

func (i *heldInformer) GetStore() cache.Store     { return i.indexer }
func (i *heldInformer) GetIndexer() cache.Indexer { return i.indexer }

func (i *heldInformer) Run(stopCh <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background()) //lint:allow-background client-go's Run takes a channel
	defer cancel()
	go func() {
		select {
		case <-stopCh:
		case <-ctx.Done():
		}
		cancel()
	}()
	i.RunWithContext(ctx)
}

func (i *heldInformer) RunWithContext(ctx context.Context) {
	done := make(chan struct{})
	go func() { defer close(done); _ = i.c.Run(ctx) }()
	i.SharedIndexInformer.RunWithContext(ctx)
	<-done
}

// heldIndexer is a read-only Indexer of whole objects: Get and List
// fetch what is not held (within wait), key listings read the metadata.
type heldIndexer struct {
	cache.Indexer // the metadata informer's: keys and index values
	c             *ondemand.Cache[store.Object]
	wait          time.Duration
}

var errReadOnly = errors.New("informers: the indexer of a type held on read is read-only")

func (x *heldIndexer) GetByKey(key string) (any, bool, error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		ns, name = "", key
	}
	ctx, cancel := context.WithTimeout(context.Background(), x.wait) //lint:allow-background a lister has no context: bounded by OnRead.Wait
	defer cancel()
	obj, err := x.c.Get(ctx, ns, name)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return obj, true, nil
}

func (x *heldIndexer) Get(obj any) (any, bool, error) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return nil, false, err
	}
	return x.GetByKey(key)
}

func (x *heldIndexer) list(namespace string) ([]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), x.wait) //lint:allow-background a lister has no context: bounded by OnRead.Wait
	defer cancel()
	objs, err := x.c.List(ctx, namespace, nil)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out, nil
}

// List returns every object whole; a failure to fetch is logged and
// gives an empty list (client-go's Store.List has no error).
func (x *heldIndexer) List() []any {
	out, err := x.list("")
	if err != nil {
		klog.Background().Error(err, "informers: listing the objects held on read")
	}
	return out
}

func (x *heldIndexer) Index(indexName string, obj any) ([]any, error) {
	if indexName != cache.NamespaceIndex {
		return nil, fmt.Errorf("informers: a type held on read is indexed by namespace only, not %q", indexName)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	return x.list(m.GetNamespace())
}

func (x *heldIndexer) ByIndex(indexName, value string) ([]any, error) {
	if indexName != cache.NamespaceIndex {
		return nil, fmt.Errorf("informers: a type held on read is indexed by namespace only, not %q", indexName)
	}
	return x.list(value)
}

func (x *heldIndexer) Add(any) error                    { return errReadOnly }
func (x *heldIndexer) Update(any) error                 { return errReadOnly }
func (x *heldIndexer) Delete(any) error                 { return errReadOnly }
func (x *heldIndexer) Replace([]any, string) error      { return errReadOnly }
func (x *heldIndexer) Resync() error                    { return nil }
func (x *heldIndexer) AddIndexers(cache.Indexers) error { return errReadOnly }

// restFetcher reads whole objects of one kind through a REST client.
type restFetcher struct {
	rc         rest.Interface
	gvk        schema.GroupVersionKind
	resource   string
	namespaced bool
	tweak      func(*metav1.ListOptions)
}

func (f restFetcher) newObject(kind string) (k8sruntime.Object, error) {
	return scheme.Scheme.New(f.gvk.GroupVersion().WithKind(kind))
}

func (f restFetcher) Get(ctx context.Context, namespace, name string) (store.Object, error) {
	o, err := f.newObject(f.gvk.Kind)
	if err != nil {
		return nil, err
	}
	if err := f.rc.Get().NamespaceIfScoped(namespace, f.namespaced).Resource(f.resource).Name(name).Do(ctx).Into(o); err != nil {
		return nil, err
	}
	obj, ok := o.(store.Object)
	if !ok {
		return nil, fmt.Errorf("informers: a %T has no object metadata", o)
	}
	return obj, nil
}

func (f restFetcher) List(ctx context.Context, namespace string, opts metav1.ListOptions) ([]store.Object, error) {
	if f.tweak != nil {
		f.tweak(&opts)
	}
	opts.Limit = ondemand.PageSize
	var out []store.Object
	for {
		list, err := f.newObject(f.gvk.Kind + "List")
		if err != nil {
			return nil, err
		}
		if err := f.rc.Get().NamespaceIfScoped(namespace, f.namespaced).Resource(f.resource).
			VersionedParams(&opts, scheme.ParameterCodec).Do(ctx).Into(list); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			obj, ok := it.(store.Object)
			if !ok {
				return nil, fmt.Errorf("informers: a %T has no object metadata", it)
			}
			out = append(out, obj)
		}
		la, err := meta.ListAccessor(list)
		if err != nil {
			return nil, err
		}
		if opts.Continue = la.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}
