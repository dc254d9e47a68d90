package informers

import (
	"context"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/clientgo/internal/factoryopts"
	lwfactory "github.com/listwatch/listwatch/informer/factory"
)

// NewSharedInformerFactory is the drop-in for client-go's function of the
// same name: a factory for all namespaces.
func NewSharedInformerFactory(client kubernetes.Interface, defaultResync time.Duration) SharedInformerFactory {
	return NewSharedInformerFactoryWithOptions(client, defaultResync)
}

// NewFilteredSharedInformerFactory is the drop-in for client-go's function
// of the same name.
//
// Deprecated: use NewSharedInformerFactoryWithOptions with WithNamespace
// and WithTweakListOptions, as client-go says.
func NewFilteredSharedInformerFactory(client kubernetes.Interface, defaultResync time.Duration, namespace string, tweakListOptions internalinterfaces.TweakListOptionsFunc) SharedInformerFactory {
	return NewSharedInformerFactoryWithOptions(client, defaultResync, WithNamespace(namespace), WithTweakListOptions(tweakListOptions))
}

// NewSharedInformerFactoryWithOptions is the drop-in for client-go's
// function of the same name: listwatch's factory, with client-go's typed
// informers and listers over listwatch's informers (see the package doc).
//
// options must be this package's. An option from client-go's package
// cannot be read: given one, the function logs an error and returns
// client-go's own factory, with every option applied, which behaves as
// client-go's constructor's would (and decodes as client-go does).
func NewSharedInformerFactoryWithOptions(client kubernetes.Interface, defaultResync time.Duration, options ...SharedInformerOption) SharedInformerFactory {
	s := settings{customResync: map[reflect.Type]time.Duration{}}
	// client-go's factory is the only value of the options' parameter
	// type; the options are applied to it and record into s.
	upstream, known := factoryopts.Apply(informers.NewSharedInformerFactoryWithOptions(client, defaultResync), options, &s)
	if !known {
		klog.Background().Error(nil, "informers: an option not from github.com/listwatch/listwatch/clientgo/informers was given; using client-go's factory (import the options from listwatch's package)")
		return upstream
	}
	memory := DefaultMemoryOptions()
	if s.memory != nil {
		memory = *s.memory
	}
	return &sharedInformerFactory{
		client:        client,
		defaultResync: defaultResync,
		settings:      s,
		memory:        memory,
		live:          newLiveScope(s),
	}
}

// sharedInformerFactory is listwatch's informers.SharedInformerFactory.
// Its group accessors (zz_generated.builtins.go) hand it to client-go's
// generated group constructors, whose typed informers call InformerFor.
type sharedInformerFactory struct {
	client        kubernetes.Interface
	defaultResync time.Duration
	settings
	memory MemoryOptions
	// live is WithLiveScope's; nil without.
	live *liveScope

	// informers holds one informer per object type, with client-go's
	// lifecycle: built after Shutdown too, never cancelled by it.
	informers lwfactory.Lifecycle[reflect.Type, cache.SharedIndexInformer]
}

var _ SharedInformerFactory = (*sharedInformerFactory)(nil)

func (f *sharedInformerFactory) InformerName() *cache.InformerName { return f.informerName }

// Start runs every informer not yet started, until stopCh is closed.
func (f *sharedInformerFactory) Start(stopCh <-chan struct{}) {
	f.StartWithContext(wait.ContextForChannel(stopCh))
}

// StartWithContext runs every informer not yet started, until ctx ends.
// After Shutdown it starts nothing.
func (f *sharedInformerFactory) StartWithContext(ctx context.Context) {
	f.informers.Start(ctx, func(ctx context.Context, inf cache.SharedIndexInformer) { inf.RunWithContext(ctx) })
}

// Shutdown makes Start start nothing more, waits until every started
// informer has returned (their stop channel or context must end) and
// releases the factory's InformerName. It may be called more than once,
// also concurrently.
func (f *sharedInformerFactory) Shutdown() {
	f.informers.Shutdown()
	f.informerName.Release()
}

// WaitForCacheSync waits until every started informer has synced or
// stopCh is closed, and says which have.
func (f *sharedInformerFactory) WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool {
	return f.WaitForCacheSyncWithContext(wait.ContextForChannel(stopCh)).Synced
}

// WaitForCacheSyncWithContext waits until every started informer has
// synced or ctx ends. Err is the context's cause when one has not.
func (f *sharedInformerFactory) WaitForCacheSyncWithContext(ctx context.Context) cache.SyncResult {
	started := f.informers.Started()
	checkers := make([]cache.DoneChecker, 0, len(started))
	for _, inf := range started {
		checkers = append(checkers, inf.HasSyncedChecker())
	}
	cache.WaitFor(ctx, "", checkers...)
	res := cache.SyncResult{Synced: make(map[reflect.Type]bool, len(started))}
	for t, inf := range started {
		res.Synced[t] = inf.HasSynced()
		if !res.Synced[t] {
			res.Err = context.Cause(ctx)
		}
	}
	return res
}

// InformerFor returns the factory's informer for obj's type, building it
// on first use. For a built-in type asked for by client-go's typed
// informers (newFunc is their default), it is listwatch's informer decoding
// with restsource; for any other newFunc, the one newFunc builds, called as
// client-go calls it. The factory's transform is set on either.
func (f *sharedInformerFactory) InformerFor(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	t := reflect.TypeOf(obj)
	inf, _ := f.informers.Get(t, func() (cache.SharedIndexInformer, error) {
		resync, ok := f.customResync[t]
		if !ok {
			resync = f.defaultResync
		}
		inf := f.newInformer(obj, newFunc, resync)
		if f.transform != nil {
			if err := inf.SetTransform(f.transform); err != nil {
				klog.Background().Error(err, "informers: setting the factory's transform", "type", t)
			}
		}
		return inf, nil
	})
	return inf
}
