package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/listwatch/listwatch/clientgo/informers"
	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	lwcrcache "github.com/listwatch/listwatch/crcache"
	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/restsource"
)

// The controller-runtime door (issue 29): a controller-runtime cache
// caching one kind, with one counting handler on its informer, as a
// manager's controller would have. cr-client-go is controller-runtime's
// own cache (cache.New, client-go's informers) with
// TransformStripManagedFields as its default transform: the baseline.
// cr-listwatch is listwatch's crcache.New with its default memory options
// (managedFields stripped while decoding, one Interner, the parts that
// repeat shared: restsource's recommended options for whole objects);
// cr-listwatch-lists has ShareRepeated off (shared ResourceLists only, the
// default before ShareRepeated became one). cr-client-go-compact is
// controller-runtime's own cache with restsource.CompactTransform (strip,
// intern, shared ResourceLists after decoding) as its default transform.
// The first two also cache the corpus's custom resource (Argo CD
// Applications, JSON only), a Go type of the cache's scheme that
// crcache decodes without listing it in Options.Types.

// realKindsCR are realKindsAll and the custom resource.
var realKindsCR = append(append([]string(nil), realKindsAll...), "applications")

func init() {
	registerRealSubject(realSubject{name: "cr-client-go", kinds: realKindsCR,
		start: startControllerRuntime(crcache.New, crcache.TransformStripManagedFields, cache.NewSharedIndexInformer, false)})
	registerRealSubject(realSubject{name: "cr-client-go-compact", baseline: "cr-client-go", kinds: realKindsAll,
		start: startControllerRuntime(crcache.New, func() cache.TransformFunc {
			return restsource.CompactTransform(restsource.NewInterner(0), true)
		}, cache.NewSharedIndexInformer, false)})
	registerRealSubject(realSubject{name: "cr-listwatch", baseline: "cr-client-go", kinds: realKindsCR,
		start: startControllerRuntime(lwcrcache.New, nil, lwcache.NewSharedIndexInformer, false)})
	lists := func(cfgArg *rest.Config, opts crcache.Options) (crcache.Cache, error) {
		m := informers.DefaultMemoryOptions()
		m.ShareRepeated = false
		return lwcrcache.NewWithOptions(lwcrcache.Options{Memory: &m})(cfgArg, opts)
	}
	registerRealSubject(realSubject{name: "cr-listwatch-lists", baseline: "cr-client-go", kinds: realKindsAll,
		start: startControllerRuntime(lists, nil, lwcache.NewSharedIndexInformer, false)})
	// Metadata-only caches (the builder's OnlyMetadata), the usual way to
	// cut an operator's memory: controller-runtime's with its metadata
	// client and TransformStripManagedFields, and crcache's (restsource
	// decoding PartialObjectMetadata in protobuf).
	registerRealSubject(realSubject{name: "cr-client-go-metadata", kinds: realKindsAll,
		start: startControllerRuntime(crcache.New, crcache.TransformStripManagedFields, cache.NewSharedIndexInformer, true)})
	registerRealSubject(realSubject{name: "cr-listwatch-metadata", baseline: "cr-client-go-metadata", kinds: realKindsAll,
		start: startControllerRuntime(lwcrcache.New, nil, lwcache.NewSharedIndexInformer, true)})
}

// newInformerFunc is client-go's cache.NewSharedIndexInformer signature.
type newInformerFunc = func(cache.ListerWatcher, kruntime.Object, time.Duration, cache.Indexers) cache.SharedIndexInformer

// startControllerRuntime runs a controller-runtime cache built by
// newCache for env's kind; transform, if set, makes the default
// transform. Its informers are built by newInformer, over a
// source without streaming lists when env.paged (crcache hands it its
// restsource Source). onlyMetadata caches metadata-only objects.
func startControllerRuntime(newCache crcache.NewCacheFunc, transform func() cache.TransformFunc, newInformer newInformerFunc, onlyMetadata bool) func(ctx context.Context, env realEnv) (*realRun, error) {
	return func(ctx context.Context, env realEnv) (*realRun, error) {
		var example client.Object
		switch env.kind {
		case "pods":
			example = &corev1.Pod{}
		case "configmaps":
			example = &corev1.ConfigMap{}
		case "secrets":
			example = &corev1.Secret{}
		case "applications":
			example = &application{}
		default:
			return nil, fmt.Errorf("unknown kind %q", env.kind)
		}
		sch := scheme.Scheme
		if env.kind == "applications" {
			sch = applicationScheme // an operator's scheme: not listed in crcache.Options.Types
		}
		if onlyMetadata {
			gvks, _, err := sch.ObjectKinds(example)
			if err != nil {
				return nil, err
			}
			m := &metav1.PartialObjectMetadata{}
			m.SetGroupVersionKind(gvks[0])
			example = m
		}
		opts := crcache.Options{
			Scheme: sch,
			NewInformer: func(lw cache.ListerWatcher, obj kruntime.Object, resync time.Duration, indexers cache.Indexers) cache.SharedIndexInformer {
				if env.paged {
					lw = objects.NoWatchList(lw)
				}
				return newInformer(lw, obj, resync, indexers)
			},
		}
		if transform != nil {
			opts.DefaultTransform = transform()
		}
		if env.selector != "" {
			sel, err := labels.Parse(env.selector)
			if err != nil {
				return nil, err
			}
			opts.DefaultLabelSelector = sel
		}
		c, err := newCache(contentConfig(env.cfg, env.encoding), opts)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { _ = c.Start(ctx) })
		inf, err := c.GetInformer(ctx, example, crcache.BlockUntilSynced(false))
		if err != nil {
			cancel()
			wg.Wait()
			return nil, err
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) { env.added() }}); err != nil {
			cancel()
			wg.Wait()
			return nil, err
		}
		st, ok := inf.(interface{ GetStore() cache.Store })
		if !ok {
			cancel()
			wg.Wait()
			return nil, fmt.Errorf("the cache's informer is a %T, without GetStore", inf)
		}
		return &realRun{hasSynced: inf.HasSynced, cached: func() int { return len(st.GetStore().ListKeys()) },
			stop: func() { cancel(); wg.Wait() }}, nil
	}
}
