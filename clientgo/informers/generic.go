package informers

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// ForResource returns the generic informer of a built-in resource: the
// factory's informer of its type (as the typed accessor gives it) and a
// lister over its cache. A resource client-go's factory has no informer
// for is an error, as with client-go.
func (f *sharedInformerFactory) ForResource(resource schema.GroupVersionResource) (GenericInformer, error) {
	b := builtinByResource[resource]
	if b == nil {
		return nil, fmt.Errorf("no informer found for %v", resource)
	}
	return &genericInformer{resource: resource.GroupResource(), informer: b.informer(f)}, nil
}

// genericInformer is a GenericInformer over one of the factory's informers.
type genericInformer struct {
	informer cache.SharedIndexInformer
	resource schema.GroupResource
}

func (g *genericInformer) Informer() cache.SharedIndexInformer { return g.informer }

func (g *genericInformer) Lister() cache.GenericLister {
	return cache.NewGenericLister(g.informer.GetIndexer(), g.resource)
}
