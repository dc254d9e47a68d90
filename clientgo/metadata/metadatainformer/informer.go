package metadatainformer

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/metadata/metadatalister"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/clientgo/internal/factoryopts"
	"github.com/listwatch/listwatch/clientgo/internal/gvrfactory"
	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/restsource"
)

// MemoryOptions are the restsource memory options of the factory's
// informers (clientgo/informers' type; the zero value turns them off).
type MemoryOptions = factoryopts.MemoryOptions

// DefaultMemoryOptions are the memory options of a factory built without
// WithMemoryOptions: managedFields stripped while decoding, a new
// Interner, the label and annotation maps and owner references that
// repeat shared.
func DefaultMemoryOptions() MemoryOptions { return factoryopts.DefaultMemoryOptions() }

// settings is what the factory's options set.
type settings struct {
	transform cache.TransformFunc
	// memory is set by WithMemoryOptions; nil means the default.
	memory *MemoryOptions
}

// WithTransform sets a transform on every informer of the factory, as
// client-go's option does (given to client-go's factory, it is client-go's
// option). It runs after decoding: with the memory options on, it sees
// objects without their managedFields.
func WithTransform(transform cache.TransformFunc) SharedInformerOption {
	return factoryopts.Option(metadatainformer.WithTransform(transform), func(s *settings) { s.transform = transform })
}

// WithMemoryOptions sets the memory options with which the factory's
// informers decode (when its client is client-go's own; see the package
// doc). To turn them off:
//
//	metadatainformer.NewSharedInformerFactoryWithOptions(client, resync, metadatainformer.WithMemoryOptions(metadatainformer.MemoryOptions{}))
//
// It is listwatch's own option: given to client-go's factory, it does
// nothing.
func WithMemoryOptions(m MemoryOptions) SharedInformerOption {
	return factoryopts.Option[SharedInformerOption](nil, func(s *settings) { s.memory = &m })
}

// NewSharedInformerFactory is the drop-in for client-go's function of the
// same name: a factory of listwatch's informers for all namespaces.
func NewSharedInformerFactory(client metadata.Interface, defaultResync time.Duration) SharedInformerFactory {
	return NewFilteredSharedInformerFactory(client, defaultResync, metav1.NamespaceAll, nil)
}

// NewFilteredSharedInformerFactory is the drop-in for client-go's function
// of the same name: a factory of listwatch's informers (each built as
// NewFilteredMetadataInformer builds one, with a namespace index) limited
// to namespace, with tweakListOptions applied to every list and watch.
func NewFilteredSharedInformerFactory(client metadata.Interface, defaultResync time.Duration, namespace string, tweakListOptions TweakListOptionsFunc) SharedInformerFactory {
	return newFactory(client, defaultResync, namespace, tweakListOptions, settings{})
}

// NewSharedInformerFactoryWithOptions is the drop-in for client-go's
// function of the same name. options must be this package's: given one of
// client-go's, which cannot be read, it logs an error and returns
// client-go's factory with every option applied.
func NewSharedInformerFactoryWithOptions(client metadata.Interface, defaultResync time.Duration, options ...SharedInformerOption) SharedInformerFactory {
	var s settings
	upstream, known := factoryopts.Apply(metadatainformer.NewSharedInformerFactoryWithOptions(client, defaultResync), options, &s)
	if !known {
		klog.Background().Error(nil, "metadatainformer: an option not from github.com/listwatch/listwatch/clientgo/metadata/metadatainformer was given; using client-go's factory (import the options from listwatch's package)")
		return upstream
	}
	return newFactory(client, defaultResync, metav1.NamespaceAll, nil, s)
}

func newFactory(client metadata.Interface, defaultResync time.Duration, namespace string, tweakListOptions TweakListOptionsFunc, s settings) SharedInformerFactory {
	memory := DefaultMemoryOptions()
	if s.memory != nil {
		memory = *s.memory
	}
	rc := restClient(client)
	return gvrfactory.New(func(gvr schema.GroupVersionResource) informers.GenericInformer {
		inf := newInformer(client, rc, memory, gvr, namespace, defaultResync,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, tweakListOptions)
		if err := inf.Informer().SetTransform(s.transform); err != nil {
			klog.Background().Error(err, "metadatainformer: setting the factory's transform", "resource", gvr)
		}
		return inf
	})
}

// NewFilteredMetadataInformer is the drop-in for client-go's function of
// the same name: listwatch's informer (the drop-in of clientgo/tools/cache)
// caching *metav1.PartialObjectMetadata of gvr, and a lister over its
// cache. Given client-go's metadata client, it lists and watches with
// restsource through the client's REST client, with DefaultMemoryOptions;
// given another client (a fake), through the client itself.
func NewFilteredMetadataInformer(client metadata.Interface, gvr schema.GroupVersionResource, namespace string, resyncPeriod time.Duration, indexers cache.Indexers, tweakListOptions TweakListOptionsFunc) informers.GenericInformer {
	return newInformer(client, restClient(client), DefaultMemoryOptions(), gvr, namespace, resyncPeriod, indexers, tweakListOptions)
}

// restClient returns the REST client of client-go's metadata client, or
// nil, saying why in a log line, for any other client.
func restClient(client metadata.Interface) *gvrfactory.REST {
	return gvrfactory.RESTOf(client, "metadatainformer")
}

func newInformer(client metadata.Interface, rc *gvrfactory.REST, memory MemoryOptions, gvr schema.GroupVersionResource, namespace string, resync time.Duration, indexers cache.Indexers, tweak TweakListOptionsFunc) informers.GenericInformer {
	lw := gvrfactory.ListerWatcher(rc, func(rc *gvrfactory.REST) (cache.ListerWatcher, error) {
		return restsource.New[*metav1.PartialObjectMetadata](memory.Source(rc.Options(gvr, namespace, tweak)))
	}, client, func() cache.ListerWatcher {
		lw := reflector.FromClient[*metav1.PartialObjectMetadataList](client.Resource(gvr).Namespace(namespace))
		return gvrfactory.Source(lw, tweak, client)
	})
	inf := lwcache.NewSharedIndexInformer(lw, &metav1.PartialObjectMetadata{}, resync, indexers)
	return &gvrfactory.Generic{Inf: inf, NewLister: func(idx cache.Indexer) cache.GenericLister {
		return metadatalister.NewRuntimeObjectShim(metadatalister.New(idx, gvr))
	}}
}
