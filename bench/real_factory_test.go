package bench

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"

	lwinformers "github.com/listwatch/listwatch/clientgo/informers"
)

// The client-go factory door (issue 28): a controller that builds its
// informers with client-go's generated factory, measured as written for
// client-go (with controller-runtime's strip transform, the baseline) and
// with the import prefix changed to listwatch's clientgo tree, whose
// factory decodes with restsource and its memory options on by default.
// Both take the factory's informer for the kind (which has the namespace
// index, as client-go's typed informers do) and a counting handler. A factory lists as its informers do by default (a
// streaming list), so these subjects have no paged rows.
func init() {
	registerRealSubject(realSubject{name: "client-go-factory", kinds: realKindsAll, streamOnly: true,
		start: func(ctx context.Context, env realEnv) (*realRun, error) {
			cs, err := kubernetes.NewForConfig(contentConfig(env.cfg, env.encoding))
			if err != nil {
				return nil, err
			}
			f := informers.NewSharedInformerFactoryWithOptions(cs, 0,
				informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = env.selector }),
				informers.WithTransform(crcache.TransformStripManagedFields()))
			return runFactoryInformer(ctx, env, factoryInformer(f, env.kind), f.Start, f.Shutdown)
		}})
	registerRealSubject(realSubject{name: "listwatch-factory", baseline: "client-go-factory", kinds: realKindsAll, streamOnly: true,
		start: func(ctx context.Context, env realEnv) (*realRun, error) {
			cs, err := kubernetes.NewForConfig(contentConfig(env.cfg, env.encoding))
			if err != nil {
				return nil, err
			}
			f := lwinformers.NewSharedInformerFactoryWithOptions(cs, 0,
				lwinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = env.selector }))
			return runFactoryInformer(ctx, env, factoryInformer(f, env.kind), f.Start, f.Shutdown)
		}})
}

// factoryInformer returns the factory's informer for kind (listwatch's
// factory has client-go's interface: SharedInformerFactory is an alias).
func factoryInformer(f informers.SharedInformerFactory, kind string) cache.SharedIndexInformer {
	switch kind {
	case "pods":
		return f.Core().V1().Pods().Informer()
	case "secrets":
		return f.Core().V1().Secrets().Informer()
	}
	return f.Core().V1().ConfigMaps().Informer()
}

// runFactoryInformer adds the counting handler, starts the factory and
// returns the run.
func runFactoryInformer(ctx context.Context, env realEnv, inf cache.SharedIndexInformer, start func(<-chan struct{}), shutdown func()) (*realRun, error) {
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) { env.added() }}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var once sync.Once
	start(ctx.Done())
	return &realRun{hasSynced: inf.HasSynced, cached: func() int { return len(inf.GetStore().ListKeys()) },
		stop: func() { once.Do(func() { cancel(); shutdown() }) }}, nil
}
