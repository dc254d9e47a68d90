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
)

// settings is what the factory's options set.
type settings struct {
	transform cache.TransformFunc
}

// WithTransform sets a transform on every informer of the factory, as
// client-go's option does (given to client-go's factory, it is client-go's
// option).
func WithTransform(transform cache.TransformFunc) SharedInformerOption {
	return factoryopts.Option(metadatainformer.WithTransform(transform), func(s *settings) { s.transform = transform })
}

// NewSharedInformerFactory is the drop-in for client-go's function of the
// same name: a factory of listwatch's informers for all namespaces.
func NewSharedInformerFactory(client metadata.Interface, defaultResync time.Duration) SharedInformerFactory {
	return NewFilteredSharedInformerFactory(client, defaultResync, metav1.NamespaceAll, nil)
}

// NewFilteredSharedInformerFactory is the drop-in for client-go's function
// of the same name: a factory of listwatch's informers (each built by
// NewFilteredMetadataInformer, with a namespace index) limited to
// namespace, with tweakListOptions applied to every list and watch.
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
	return gvrfactory.New(func(gvr schema.GroupVersionResource) informers.GenericInformer {
		inf := NewFilteredMetadataInformer(client, gvr, namespace, defaultResync,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, tweakListOptions)
		if err := inf.Informer().SetTransform(s.transform); err != nil {
			klog.Background().Error(err, "metadatainformer: setting the factory's transform", "resource", gvr)
		}
		return inf
	})
}

// NewFilteredMetadataInformer is the drop-in for client-go's function of
// the same name: listwatch's informer (the drop-in of clientgo/tools/cache)
// caching *metav1.PartialObjectMetadata, listing and watching gvr through
// the metadata client, and a lister over its cache.
func NewFilteredMetadataInformer(client metadata.Interface, gvr schema.GroupVersionResource, namespace string, resyncPeriod time.Duration, indexers cache.Indexers, tweakListOptions TweakListOptionsFunc) informers.GenericInformer {
	lw := reflector.FromClient[*metav1.PartialObjectMetadataList](client.Resource(gvr).Namespace(namespace))
	inf := lwcache.NewSharedIndexInformer(gvrfactory.Source(lw, tweakListOptions, client), &metav1.PartialObjectMetadata{}, resyncPeriod, indexers)
	return &gvrfactory.Generic{Inf: inf, NewLister: func(idx cache.Indexer) cache.GenericLister {
		return metadatalister.NewRuntimeObjectShim(metadatalister.New(idx, gvr))
	}}
}
