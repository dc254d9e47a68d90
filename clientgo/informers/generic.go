package informers

import (
	"fmt"

	"github.com/listwatch/listwatch/clientgo/internal/gvrfactory"
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
	gr := resource.GroupResource()
	return &gvrfactory.Generic{Inf: b.informer(f), NewLister: func(idx cache.Indexer) cache.GenericLister {
		return cache.NewGenericLister(idx, gr)
	}}, nil
}
