package operator

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/listwatch/listwatch/clientgo/informers"
	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	"github.com/listwatch/listwatch/crcache"
)

// NewInformerFunc is the type of controller-runtime's cache.Options.NewInformer:
// client-go's cache.NewSharedIndexInformer signature.
type NewInformerFunc = func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer

// Informers names the informer implementation a manager's cache builds
// every informer with. The zero value is Listwatch. It implements
// flag.Value, so a command can switch with -informers=client-go.
type Informers string

const (
	// Listwatch builds the manager's cache with crcache: listwatch's
	// informers decoding with restsource.
	Listwatch Informers = "listwatch"
	// ClientGo builds client-go's own informers, for comparison.
	ClientGo Informers = "client-go"
)

// String implements flag.Value.
func (i *Informers) String() string {
	if i == nil || *i == "" {
		return string(Listwatch)
	}
	return string(*i)
}

// Set implements flag.Value; it accepts "listwatch" and "client-go".
func (i *Informers) Set(s string) error {
	switch Informers(s) {
	case Listwatch, ClientGo:
		*i = Informers(s)
		return nil
	}
	return fmt.Errorf("informers: %q is neither %q nor %q", s, Listwatch, ClientGo)
}

// NewInformer returns the informer constructor of i (client-go's
// signature, as in cache.Options.NewInformer), or an error for an unknown
// name. The manager uses NewCache instead.
func (i Informers) NewInformer() (NewInformerFunc, error) {
	switch i {
	case Listwatch, "":
		return lwcache.NewSharedIndexInformer, nil
	case ClientGo:
		return toolscache.NewSharedIndexInformer, nil
	}
	return nil, fmt.Errorf("informers: unknown implementation %q", string(i))
}

// NewCache returns the manager's cache constructor
// (manager.Options.NewCache) for i. For Listwatch it is crcache's: the one
// line is manager.Options{NewCache: crcache.New}; every informer is
// listwatch's and decodes built-in types with restsource, managedFields
// left out while decoding when strip is set (crcache's default) and kept
// otherwise. For ClientGo it is controller-runtime's own cache.New with
// client-go's informers and, when strip is set,
// cache.TransformStripManagedFields as the default transform. onNew, if
// set, is called with every informer the cache builds.
func (i Informers) NewCache(strip bool, onNew func(runtime.Object, toolscache.SharedIndexInformer)) (cache.NewCacheFunc, error) {
	switch i {
	case Listwatch, "":
		o := crcache.Options{OnNewInformer: onNew}
		if !strip {
			m := informers.DefaultMemoryOptions()
			m.StripManagedFields = false
			o.Memory = &m
		}
		return crcache.NewWithOptions(o), nil
	case ClientGo:
		return func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
			opts.NewInformer = func(lw toolscache.ListerWatcher, example runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
				inf := toolscache.NewSharedIndexInformer(lw, example, resync, indexers)
				if onNew != nil {
					onNew(example, inf)
				}
				return inf
			}
			if strip && opts.DefaultTransform == nil {
				opts.DefaultTransform = cache.TransformStripManagedFields()
			}
			return cache.New(cfg, opts)
		}, nil
	}
	return nil, fmt.Errorf("informers: unknown implementation %q", string(i))
}
