package informers

import (
	"reflect"
	"time"

	v1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/clientgo/internal/factoryopts"
)

// settings is what a factory's options set: client-go's, and the memory
// options.
type settings struct {
	namespace        string
	tweakListOptions internalinterfaces.TweakListOptionsFunc
	customResync     map[reflect.Type]time.Duration
	transform        cache.TransformFunc
	informerName     *cache.InformerName
	// memory is set by WithMemoryOptions; nil means the default.
	memory *MemoryOptions
	// onRead holds WithOnRead's types.
	onRead map[reflect.Type]OnRead
	// liveScope is set by WithLiveScope.
	liveScope bool
}

// option returns an option that is client-go's base option and, given to
// this package's constructors, records what it sets (package
// clientgo/internal/factoryopts).
func option(base SharedInformerOption, record func(*settings)) SharedInformerOption {
	return factoryopts.Option(base, record)
}

// WithNamespace limits the factory to namespace, as client-go's option
// does (cluster-scoped resources are not limited).
func WithNamespace(namespace string) SharedInformerOption {
	return option(informers.WithNamespace(namespace), func(s *settings) { s.namespace = namespace })
}

// WithTweakListOptions sets a function that edits the options of every
// list and watch of the factory's informers, as client-go's option does.
func WithTweakListOptions(tweakListOptions internalinterfaces.TweakListOptionsFunc) SharedInformerOption {
	return option(informers.WithTweakListOptions(tweakListOptions), func(s *settings) { s.tweakListOptions = tweakListOptions })
}

// WithTransform sets a transform on every informer of the factory, as
// client-go's option does. It runs after decoding: with the memory options
// on, it sees objects without their managedFields.
func WithTransform(transform cache.TransformFunc) SharedInformerOption {
	return option(informers.WithTransform(transform), func(s *settings) { s.transform = transform })
}

// WithCustomResyncConfig sets the resync period of the informers of the
// given object types, as client-go's option does.
func WithCustomResyncConfig(resyncConfig map[v1.Object]time.Duration) SharedInformerOption {
	return option(informers.WithCustomResyncConfig(resyncConfig), func(s *settings) {
		for obj, d := range resyncConfig {
			s.customResync[reflect.TypeOf(obj)] = d
		}
	})
}

// WithInformerName sets the InformerName the factory's informers register
// their resources under, as client-go's option does; Shutdown releases it.
func WithInformerName(informerName *cache.InformerName) SharedInformerOption {
	return option(informers.WithInformerName(informerName), func(s *settings) { s.informerName = informerName })
}

// MemoryOptions are the restsource memory options (restsource.Options'
// fields of the same names) with which the factory's informers of
// built-in types decode what they list and watch. The zero value turns
// them all off; the default is DefaultMemoryOptions. The same type serves
// the metadatainformer and dynamicinformer factories.
type MemoryOptions = factoryopts.MemoryOptions

// DefaultMemoryOptions are the memory options of a factory built without
// WithMemoryOptions: managedFields stripped while decoding, an Interner of
// restsource's default size (a new one for each factory) and the parts
// that repeat shared (ShareRepeated): listwatch's recommended options for
// whole objects.
func DefaultMemoryOptions() MemoryOptions { return factoryopts.DefaultMemoryOptions() }

// WithMemoryOptions sets the memory options of the factory's informers of
// built-in types (those it builds itself; see the package doc). To turn
// them off:
//
//	informers.NewSharedInformerFactoryWithOptions(client, resync, informers.WithMemoryOptions(informers.MemoryOptions{}))
//
// It is listwatch's own option: given to client-go's factory, it does
// nothing.
func WithMemoryOptions(m MemoryOptions) SharedInformerOption {
	return option(nil, func(s *settings) { s.memory = &m })
}

// WithOnRead makes the factory hold obj's type whole only once read
// (package ondemand): its informer caches every object's metadata, and
// its lister's Get and List fetch what is not held, waiting at most
// OnRead.Wait, since a lister has no context. Handlers get no whole
// objects: the informer's AddEventHandler returns [ErrOnRead], or, with
// OnRead.MetadataHandlers, registers a handler given the metadata. It is
// listwatch's own option: given to client-go's factory, it does nothing.
//
//	informers.NewSharedInformerFactoryWithOptions(client, resync,
//		informers.WithOnRead(&corev1.Secret{}, informers.OnRead{Budget: 64 << 20}))
func WithOnRead(obj runtime.Object, o OnRead) SharedInformerOption {
	return option(nil, func(s *settings) {
		if s.onRead == nil {
			s.onRead = map[reflect.Type]OnRead{}
		}
		s.onRead[reflect.TypeOf(obj)] = o
	})
}
