package dynamicinformer

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamiclister"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/clientgo/internal/factoryopts"
	"github.com/listwatch/listwatch/clientgo/internal/gvrfactory"
	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/restsource"
)

// MemoryOptions are the restsource memory options of the factory's
// informers (clientgo/informers' type; the zero value turns them off).
type MemoryOptions = factoryopts.MemoryOptions

// DefaultMemoryOptions are the memory options of the factories this
// package's client-go constructors build: managedFields stripped while
// decoding, a new Interner (keys and repeating string values of every
// object's maps), the label and annotation maps and owner references that
// repeat shared.
func DefaultMemoryOptions() MemoryOptions { return factoryopts.DefaultMemoryOptions() }

// NewDynamicSharedInformerFactory is the drop-in for client-go's function
// of the same name: a factory of listwatch's informers for all namespaces.
func NewDynamicSharedInformerFactory(client dynamic.Interface, defaultResync time.Duration) DynamicSharedInformerFactory {
	return NewFilteredDynamicSharedInformerFactory(client, defaultResync, metav1.NamespaceAll, nil)
}

// NewFilteredDynamicSharedInformerFactory is the drop-in for client-go's
// function of the same name: a factory of listwatch's informers (each
// built as NewFilteredDynamicInformer builds one, with a namespace index)
// limited to namespace, with tweakListOptions applied to every list and
// watch, and DefaultMemoryOptions.
func NewFilteredDynamicSharedInformerFactory(client dynamic.Interface, defaultResync time.Duration, namespace string, tweakListOptions TweakListOptionsFunc) DynamicSharedInformerFactory {
	return NewFilteredDynamicSharedInformerFactoryWithMemoryOptions(client, defaultResync, namespace, tweakListOptions, DefaultMemoryOptions())
}

// NewFilteredDynamicSharedInformerFactoryWithMemoryOptions is
// NewFilteredDynamicSharedInformerFactory with memory options of its own
// (listwatch's; client-go's package has no options). To turn them off,
// pass MemoryOptions{}.
func NewFilteredDynamicSharedInformerFactoryWithMemoryOptions(client dynamic.Interface, defaultResync time.Duration, namespace string, tweakListOptions TweakListOptionsFunc, memory MemoryOptions) DynamicSharedInformerFactory {
	rc := gvrfactory.RESTOf(client, "dynamicinformer")
	return gvrfactory.New(func(gvr schema.GroupVersionResource) informers.GenericInformer {
		return newInformer(client, rc, memory, gvr, namespace, defaultResync,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, tweakListOptions)
	})
}

// NewFilteredDynamicInformer is the drop-in for client-go's function of the
// same name: listwatch's informer (the drop-in of clientgo/tools/cache)
// caching *unstructured.Unstructured objects of gvr, and a lister over its
// cache. Given client-go's dynamic client, it lists and watches with
// restsource (JSON) through the client's REST client, with
// DefaultMemoryOptions; given another client (a fake), through the client
// itself.
func NewFilteredDynamicInformer(client dynamic.Interface, gvr schema.GroupVersionResource, namespace string, resyncPeriod time.Duration, indexers cache.Indexers, tweakListOptions TweakListOptionsFunc) informers.GenericInformer {
	return newInformer(client, gvrfactory.RESTOf(client, "dynamicinformer"), DefaultMemoryOptions(), gvr, namespace, resyncPeriod, indexers, tweakListOptions)
}

func newInformer(client dynamic.Interface, rc *gvrfactory.REST, memory MemoryOptions, gvr schema.GroupVersionResource, namespace string, resync time.Duration, indexers cache.Indexers, tweak TweakListOptionsFunc) informers.GenericInformer {
	lw := gvrfactory.ListerWatcher(rc, func(rc *gvrfactory.REST) (cache.ListerWatcher, error) {
		opts := memory.Source(rc.Options(gvr, namespace, tweak))
		opts.GroupVersionKind = gvr.GroupVersion().WithKind("") // any kind, as the dynamic client
		return restsource.New[*unstructured.Unstructured](opts)
	}, client, func() cache.ListerWatcher {
		lw := reflector.FromClient[*unstructured.UnstructuredList](client.Resource(gvr).Namespace(namespace))
		return gvrfactory.Source(lw, tweak, client)
	})
	inf := lwcache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, resync, indexers)
	return &gvrfactory.Generic{Inf: inf, NewLister: func(idx cache.Indexer) cache.GenericLister {
		return dynamiclister.NewRuntimeObjectShim(dynamiclister.New(idx, gvr))
	}}
}
