package bench

import (
	"context"
	"os"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"

	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/store"
)

var libs = []string{"listwatch", "client-go"}

// libsWithDropin adds listwatch's client-go drop-in
// (clientgo/tools/cache.NewSharedIndexInformer, started like client-go's) for the
// benchmarks that measure it: BENCH_DROPIN=1.
func libsWithDropin() []string {
	if os.Getenv("BENCH_DROPIN") != "" {
		return []string{"listwatch", "listwatch-dropin", "client-go"}
	}
	return libs
}

// handler is one registered handler, library-neutral: every notification
// (add, update, delete) calls fn with the newest object.
type handler struct {
	fn func(p *corev1.Pod)
	// coalesce asks listwatch for its default Coalesce delivery; otherwise
	// the listwatch handler delivers in order, as client-go does.
	coalesce bool
}

// setup is one informer under test.
type setup struct {
	lw       cache.ListerWatcher
	handlers []handler
	// inOrderQueue makes listwatch's queue deliver every event in order,
	// as client-go's RealFIFO does (needed when a benchmark counts events).
	inOrderQueue bool
	// paged forces paginated lists on the listwatch side.
	paged bool
	// stripManagedFields drops managedFields in the informer, each library
	// its recommended way (informer.StripManagedFields; controller-runtime's
	// TransformStripManagedFields).
	stripManagedFields bool
	// atomicRelists sets listwatch's informer.Options.AtomicRelists.
	atomicRelists bool
	// onQueue, if set, is called with every object as the informer takes
	// it in, before it is queued (each library's transform, where both
	// call it for a list's items and a watch's objects alike).
	onQueue func(p *corev1.Pod)
}

// running is a started informer.
type running struct {
	hasSynced func() bool
	nsList    func(ns string) int
	stop      func()
}

// nodeIndex is the node index as client-go's IndexFunc; nodeOf is the same
// index as a listwatch single-valued index (store.ValueIndexFunc), which is
// what a listwatch user would pick for a one-value-per-object index: the
// store maintains it without allocating. Each library gets its own idiom;
// both index every pod by node (and by namespace).
func nodeIndex(p *corev1.Pod) ([]string, error) { return []string{p.Spec.NodeName}, nil }

func nodeOf(p *corev1.Pod) (string, bool) { return p.Spec.NodeName, true }

func start(b testing.TB, lib string, s setup) *running {
	// Some benchmarks (steady state, watch decode, memory) start an informer
	// in the first run of a sub-benchmark and reuse it in the later runs,
	// each of which has a b.Context() of its own: running.stop ends it.
	ctx, cancel := context.WithCancel(context.Background()) //lint:allow-background outlives one run of the benchmark function; stopped by running.stop
	var wg sync.WaitGroup
	r := &running{}
	switch lib {
	case "listwatch":
		opts := informer.Options[*corev1.Pod]{Source: reflector.FromListerWatcher(s.lw), OrderedQueue: s.inOrderQueue,
			ValueIndexers: store.ValueIndexers[*corev1.Pod]{"node": nodeOf}, AtomicRelists: s.atomicRelists}
		if s.paged {
			opts.Reflector.WatchList = reflector.WatchListOff
		}
		if s.stripManagedFields {
			opts.Transform = informer.StripManagedFields[*corev1.Pod]
		}
		if s.onQueue != nil {
			if s.stripManagedFields {
				b.Fatal("onQueue and stripManagedFields together")
			}
			opts.Transform = func(p *corev1.Pod) (*corev1.Pod, error) { s.onQueue(p); return p, nil }
		}
		inf, err := informer.New(opts)
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range s.handlers {
			mode := informer.InOrder
			if h.coalesce {
				mode = informer.Coalesce
			}
			fn := h.fn
			if _, err := inf.AddHandler(informer.HandlerFuncs[*corev1.Pod]{
				AddFunc:    func(p *corev1.Pod, _ bool) { fn(p) },
				UpdateFunc: func(_, p *corev1.Pod) { fn(p) },
				DeleteFunc: func(p *corev1.Pod, _ bool) { fn(p) },
			}, informer.HandlerOptions{Delivery: &mode}); err != nil {
				b.Fatal(err)
			}
		}
		wg.Go(func() { _ = inf.Run(ctx) })
		rd := inf.Reader()
		r.hasSynced = inf.HasSynced
		r.nsList = func(ns string) int { return len(rd.Namespace(ns).List(labels.Everything())) }
	case "client-go", "listwatch-dropin":
		lw := s.lw
		if s.paged {
			lw = objects.NoWatchList(lw)
		}
		newInformer := cache.NewSharedIndexInformer
		if lib == "listwatch-dropin" {
			newInformer = lwcache.NewSharedIndexInformer // client-go's code with the import prefix changed
		}
		inf := newInformer(lw, &corev1.Pod{}, 0, cache.Indexers{
			cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
			"node":               func(o any) ([]string, error) { return nodeIndex(o.(*corev1.Pod)) },
		})
		if s.stripManagedFields {
			if err := inf.SetTransform(crcache.TransformStripManagedFields()); err != nil {
				b.Fatal(err)
			}
		}
		if s.onQueue != nil {
			if s.stripManagedFields {
				b.Fatal("onQueue and stripManagedFields together")
			}
			if err := inf.SetTransform(func(o any) (any, error) {
				if p, ok := o.(*corev1.Pod); ok {
					s.onQueue(p)
				}
				return o, nil
			}); err != nil {
				b.Fatal(err)
			}
		}
		for _, h := range s.handlers {
			fn := h.fn
			if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    func(o any) { fn(o.(*corev1.Pod)) },
				UpdateFunc: func(_, o any) { fn(o.(*corev1.Pod)) },
				DeleteFunc: func(o any) {
					if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
						o = t.Obj
					}
					fn(o.(*corev1.Pod))
				},
			}); err != nil {
				b.Fatal(err)
			}
		}
		wg.Go(func() { inf.RunWithContext(ctx) })
		r.hasSynced = inf.HasSynced
		r.nsList = func(ns string) int { return len(mustList(inf.GetIndexer(), ns)) }
	default:
		b.Fatalf("unknown library %q", lib)
	}
	r.stop = func() { cancel(); wg.Wait() }
	return r
}

// mustList lists a namespace the way client-go's generated listers do.
func mustList(idx cache.Indexer, ns string) []*corev1.Pod {
	var out []*corev1.Pod
	_ = cache.ListAllByNamespace(idx, ns, labels.Everything(), func(o any) { out = append(out, o.(*corev1.Pod)) })
	return out
}
