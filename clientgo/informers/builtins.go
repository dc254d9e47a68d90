package informers

import (
	"reflect"
	"runtime"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/clientgo/internal/gvrfactory"
	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	"github.com/listwatch/listwatch/internal/nilcheck"
	"github.com/listwatch/listwatch/restsource"
	builtinpkg "github.com/listwatch/listwatch/restsource/builtin"
)

// builtin is what the factory knows of one type client-go's factory has an
// informer for: the type (restsource/builtin's table) and the factory's
// columns, generated from client-go by hack/clientgo-informers
// (zz_generated.builtins.go).
type builtin struct {
	gvr schema.GroupVersionResource
	// typ is restsource/builtin's entry of gvr, filled by init.
	typ builtinpkg.Type
	// informer is client-go's typed informer of the type on f (ForResource).
	informer func(f *sharedInformerFactory) cache.SharedIndexInformer
	// restClient is the clientset's REST client of the type's group
	// version: nil (or a nil pointer) for client-go's fake clientset.
	restClient func(kubernetes.Interface) rest.Interface
	// clientset lists and watches through the typed client, in namespace
	// if the type is namespaced.
	clientset func(c kubernetes.Interface, namespace string) cache.ListerWatcherWithContext
}

var (
	// builtinByType and builtinByResource index builtins.
	builtinByType     = map[reflect.Type]*builtin{}
	builtinByResource = map[schema.GroupVersionResource]*builtin{}
)

func init() {
	for i := range builtins {
		b := &builtins[i]
		t, ok := builtinpkg.ForResource(b.gvr)
		if !ok {
			// Both tables are generated from client-go in one run
			// (TestBuiltinsHaveTypes); a type missing from
			// restsource/builtin gets client-go's informer.
			continue
		}
		b.typ = t
		builtinByType[reflect.TypeOf(t.Example)] = b
		builtinByResource[b.gvr] = b
	}
}

// isDefaultInformer reports whether newFunc is the default of one of
// client-go's generated typed informers: the method value
// f.defaultInformer of, say, k8s.io/client-go/informers/core/v1's
// podInformer, which builds client-go's informer over the clientset. The
// factory builds its own informer instead.
func isDefaultInformer(newFunc internalinterfaces.NewInformerFunc) bool {
	if newFunc == nil {
		return false
	}
	fn := runtime.FuncForPC(reflect.ValueOf(newFunc).Pointer())
	if fn == nil {
		return false
	}
	name := fn.Name() // k8s.io/client-go/informers/core/v1.(*podInformer).defaultInformer-fm
	return strings.HasPrefix(name, "k8s.io/client-go/informers/") && strings.HasSuffix(name, ").defaultInformer-fm")
}

// newInformer builds the informer InformerFor hands out for obj: see
// there.
func (f *sharedInformerFactory) newInformer(obj k8sruntime.Object, newFunc internalinterfaces.NewInformerFunc, resync time.Duration) cache.SharedIndexInformer {
	b := builtinByType[reflect.TypeOf(obj)]
	if b == nil || !isDefaultInformer(newFunc) {
		return newFunc(f.client, resync)
	}
	if o, ok := f.onRead[reflect.TypeOf(obj)]; ok {
		inf, err := f.onReadInformer(b, obj, o)
		if err == nil {
			return inf
		}
		klog.Background().Error(err, "informers: building the informer held on read; caching whole objects", "resource", b.gvr)
	}
	opts := cache.SharedIndexInformerOptions{
		ResyncPeriod: resync,
		Indexers:     cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		Identifier:   f.informerName.WithResource(b.gvr),
	}
	if f.live != nil && b.typ.Namespaced && !nilcheck.Is(f.client) {
		inf, err := f.liveInformer(b, obj, opts)
		if err != nil {
			klog.Background().Error(err, "informers: building the informer of a live scope; it keeps the factory's options", "resource", b.gvr)
		}
		if inf != nil {
			return inf
		}
	}
	lw, err := f.source(b)
	if err != nil {
		// restsource.New refuses only options it validates, all set here,
		// and types its scheme lacks, which client-go's are not.
		klog.Background().Error(err, "informers: building the source; using client-go's informer", "resource", b.gvr)
		return newFunc(f.client, resync)
	}
	return lwcache.NewSharedIndexInformerWithOptions(lw, obj, opts)
}

// source is what an informer of b's type lists and watches: restsource
// over the group version's REST client, with the factory's namespace,
// tweak and memory options; or, for a clientset without a REST client
// (client-go's fake), the typed client's List and Watch with the
// factory's namespace and tweak, as client-go's informer would use them.
func (f *sharedInformerFactory) source(b *builtin) (cache.ListerWatcher, error) {
	namespace := f.namespace
	if !b.typ.Namespaced {
		namespace = metav1.NamespaceAll
	}
	if nilcheck.Is(f.client) {
		return gvrfactory.NoClient(), nil
	}
	rc := b.restClient(f.client)
	if nilcheck.Is(rc) {
		return gvrfactory.Source(b.clientset(f.client, namespace), f.tweakListOptions, f.client), nil
	}
	lw, err := b.typ.New(f.memory.Source(restsource.Options{
		Client:           rc,
		Resource:         b.gvr.Resource,
		Namespace:        namespace,
		TweakListOptions: f.tweakListOptions,
	}))
	if err != nil {
		return nil, err
	}
	return gvrfactory.WatchListOf(lw, f.client), nil
}
