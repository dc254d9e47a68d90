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

	"github.com/listwatch/listwatch/clientgo/internal/gvrfactory"
	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	"github.com/listwatch/listwatch/reflector"
)

// NewDynamicSharedInformerFactory is the drop-in for client-go's function
// of the same name: a factory of listwatch's informers for all namespaces.
func NewDynamicSharedInformerFactory(client dynamic.Interface, defaultResync time.Duration) DynamicSharedInformerFactory {
	return NewFilteredDynamicSharedInformerFactory(client, defaultResync, metav1.NamespaceAll, nil)
}

// NewFilteredDynamicSharedInformerFactory is the drop-in for client-go's
// function of the same name: a factory of listwatch's informers (each
// built by NewFilteredDynamicInformer, with a namespace index) limited to
// namespace, with tweakListOptions applied to every list and watch.
func NewFilteredDynamicSharedInformerFactory(client dynamic.Interface, defaultResync time.Duration, namespace string, tweakListOptions TweakListOptionsFunc) DynamicSharedInformerFactory {
	return gvrfactory.New(func(gvr schema.GroupVersionResource) informers.GenericInformer {
		return NewFilteredDynamicInformer(client, gvr, namespace, defaultResync,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, tweakListOptions)
	})
}

// NewFilteredDynamicInformer is the drop-in for client-go's function of the
// same name: listwatch's informer (the drop-in of clientgo/tools/cache)
// caching *unstructured.Unstructured, listing and watching gvr through the
// dynamic client, and a lister over its cache.
func NewFilteredDynamicInformer(client dynamic.Interface, gvr schema.GroupVersionResource, namespace string, resyncPeriod time.Duration, indexers cache.Indexers, tweakListOptions TweakListOptionsFunc) informers.GenericInformer {
	lw := reflector.FromClient[*unstructured.UnstructuredList](client.Resource(gvr).Namespace(namespace))
	inf := lwcache.NewSharedIndexInformer(gvrfactory.Source(lw, tweakListOptions, client), &unstructured.Unstructured{}, resyncPeriod, indexers)
	return &gvrfactory.Generic{Inf: inf, NewLister: func(idx cache.Indexer) cache.GenericLister {
		return dynamiclister.NewRuntimeObjectShim(dynamiclister.New(idx, gvr))
	}}
}
