package bench

import (
	"context"
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/restsource"
	"github.com/listwatch/listwatch/store"
)

// realSubject is one way of caching a kind from a real kube-apiserver,
// measured alone in a child process by BenchmarkRealMemory. Subjects are
// registered by name with registerRealSubject; a door (client-go's
// factory, controller-runtime's cache, ...) adds its own in a file of its
// own, with the baseline it is to be divided by.
type realSubject struct {
	name string
	// baseline is the subject whose figures this one's are divided by in
	// the report (in the same run, kind, encoding and list mode); "" for a
	// baseline.
	baseline string
	// kinds are the kinds it can cache (realKinds' names).
	kinds []string
	// streamOnly: it lists only as its door does by default (a streaming
	// list); it has no paged rows.
	streamOnly bool
	// start builds the subject's informer for env and runs it until ctx
	// ends or run.stop is called.
	start func(ctx context.Context, env realEnv) (*realRun, error)
}

// realEnv is what a subject is asked to cache, and how.
type realEnv struct {
	cfg      *rest.Config // admin credentials; the subject sets its own content type
	kind     string       // "pods", "configmaps", "secrets"
	encoding string       // "protobuf" or "json"
	paged    bool         // list in pages of 500; otherwise a streaming list (sendInitialEvents)
	selector string       // a label selector over the corpus ("" for all of it)
	// added must be called once per add notification a handler receives.
	added func()
}

// realRun is a started subject.
type realRun struct {
	hasSynced func() bool
	cached    func() int                // objects in its cache
	stats     func() map[string]float64 // extra figures for the report (may be nil)
	stop      func()                    // stops it and waits for its goroutines
	// read reads one whole object, as a reconcile does, and returns its
	// resource version and data (nil for subjects that only sync).
	read func(ctx context.Context, namespace, name string) (rv string, data map[string][]byte, err error)
}

var realSubjects = map[string]realSubject{}

func registerRealSubject(s realSubject) {
	if _, dup := realSubjects[s.name]; dup {
		panic("bench: real subject " + s.name + " registered twice")
	}
	realSubjects[s.name] = s
}

// realSubjectNames returns the registered subjects that cache kind,
// baselines first.
func realSubjectNames(kind string) []string {
	var out []string
	for name, s := range realSubjects {
		for _, k := range s.kinds {
			if k == kind {
				out = append(out, name)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		bi, bj := realSubjects[out[i]].baseline == "", realSubjects[out[j]].baseline == ""
		if bi != bj {
			return bi
		}
		return out[i] < out[j]
	})
	return out
}

// contentConfig returns a copy of cfg asking for encoding.
func contentConfig(cfg *rest.Config, encoding string) *rest.Config {
	c := rest.CopyConfig(cfg)
	if encoding == "protobuf" {
		c.ContentType = kruntime.ContentTypeProtobuf
		c.AcceptContentTypes = kruntime.ContentTypeProtobuf + "," + kruntime.ContentTypeJSON
	} else {
		c.ContentType = kruntime.ContentTypeJSON
	}
	return c
}

// clientsetLW is the ListerWatcher client-go's generated informers build
// over the clientset, for kind, with the selector.
func clientsetLW(cs kubernetes.Interface, kind, selector string) (cache.ListerWatcher, kruntime.Object) {
	switch kind {
	case "pods":
		return typedLW(cs.CoreV1().Pods(""), selector), &corev1.Pod{}
	case "configmaps":
		return typedLW(cs.CoreV1().ConfigMaps(""), selector), &corev1.ConfigMap{}
	case "secrets":
		return typedLW(cs.CoreV1().Secrets(""), selector), &corev1.Secret{}
	}
	panic("bench: unknown kind " + kind)
}

// typedLW lists and watches through a typed client with the label
// selector, as client-go's generated informers do.
func typedLW[L kruntime.Object](c interface {
	List(context.Context, metav1.ListOptions) (L, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
}, selector string) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (kruntime.Object, error) {
			o.LabelSelector = selector
			return c.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return c.Watch(ctx, o)
		},
	}
}

// startClientGo is client-go's SharedIndexInformer on its clientset with a
// namespace index, controller-runtime's TransformStripManagedFields and
// one counting handler: the baseline.
func startClientGo(ctx context.Context, env realEnv) (*realRun, error) {
	cs, err := kubernetes.NewForConfig(contentConfig(env.cfg, env.encoding))
	if err != nil {
		return nil, err
	}
	lw, example := clientsetLW(cs, env.kind, env.selector)
	if env.paged {
		lw = objects.NoWatchList(lw)
	}
	inf := cache.NewSharedIndexInformer(lw, example, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := inf.SetTransform(crcache.TransformStripManagedFields()); err != nil {
		return nil, err
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) { env.added() }}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(ctx) })
	return &realRun{hasSynced: inf.HasSynced, cached: func() int { return len(inf.GetStore().ListKeys()) },
		stop: func() { cancel(); wg.Wait() }}, nil
}

// listwatchOptions are restsource's options of a listwatch subject.
type listwatchOptions struct {
	strip, intern, shareLists, shareRepeated bool
}

// startListwatch is listwatch's typed informer (namespace index, one
// counting handler) on restsource with the options, for env's kind.
func startListwatch(o listwatchOptions) func(ctx context.Context, env realEnv) (*realRun, error) {
	return func(ctx context.Context, env realEnv) (*realRun, error) {
		switch env.kind {
		case "pods":
			return startRestsource[*corev1.Pod](ctx, env, o, nil)
		case "configmaps":
			return startRestsource[*corev1.ConfigMap](ctx, env, o, nil)
		case "secrets":
			return startRestsource[*corev1.Secret](ctx, env, o, nil)
		}
		return nil, fmt.Errorf("unknown kind %q", env.kind)
	}
}

// startRestsource runs a listwatch informer of T decoded by restsource;
// projectionOf, if set, makes T a projection of it.
func startRestsource[T interface {
	*E
	kruntime.Object
	store.Object
}, E any](ctx context.Context, env realEnv, o listwatchOptions, projectionOf kruntime.Object) (*realRun, error) {
	cs, err := kubernetes.NewForConfig(contentConfig(env.cfg, env.encoding))
	if err != nil {
		return nil, err
	}
	opts := restsource.Options{Client: cs.CoreV1().RESTClient(), Resource: env.kind, StripManagedFields: o.strip,
		ShareResourceLists: o.shareLists, ShareRepeated: o.shareRepeated, ProjectionOf: projectionOf,
		TweakListOptions: func(lo *metav1.ListOptions) { lo.LabelSelector = env.selector }}
	opts.ContentType = restsource.ContentTypeJSON
	if env.encoding == "protobuf" {
		opts.ContentType = restsource.ContentTypeProtobuf
	}
	var in *restsource.Interner
	if o.intern {
		in = restsource.NewInterner(0)
		opts.Interner = in
	}
	src, err := restsource.New[T](opts)
	if err != nil {
		return nil, err
	}
	iopts := informer.Options[T]{Source: reflector.FromListerWatcher(src)}
	if env.paged {
		iopts.Reflector.WatchList = reflector.WatchListOff
	}
	inf, err := informer.New(iopts)
	if err != nil {
		return nil, err
	}
	if _, err := inf.AddHandler(informer.HandlerFuncs[T]{AddFunc: func(T, bool) { env.added() }}, informer.HandlerOptions{}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = inf.Run(ctx) })
	rd := inf.Reader()
	run := &realRun{hasSynced: inf.HasSynced, cached: func() int { return rd.Len() },
		stop: func() { cancel(); wg.Wait() }}
	if in != nil {
		run.stats = func() map[string]float64 {
			st := in.Stats()
			m := map[string]float64{"intern-hit-%": 100 * st.HitRate(), "intern-len": float64(st.Len),
				"intern-cap": float64(st.Capacity), "intern-KiB": float64(st.Bytes) / 1024}
			if st.ListHits+st.ListMisses > 0 {
				m["lists-hit-%"] = 100 * float64(st.ListHits) / float64(st.ListHits+st.ListMisses)
			}
			if st.Parts.Hits+st.Parts.Misses > 0 {
				m["parts-hit-%"] = 100 * st.Parts.HitRate()
				m["parts-len"] = float64(st.Parts.Len)
				m["parts-KiB"] = float64(st.Parts.Bytes) / 1024
			}
			return m
		}
	}
	return run, nil
}

// realKindsAll are the kinds every subject of whole objects (or of their
// metadata) caches.
var realKindsAll = []string{"pods", "configmaps", "secrets"}

func init() {
	registerRealSubject(realSubject{name: "client-go", kinds: realKindsAll, start: startClientGo})
	// listwatch: the recommended options for whole objects.
	registerRealSubject(realSubject{name: "listwatch", baseline: "client-go", kinds: realKindsAll,
		start: startListwatch(listwatchOptions{strip: true, intern: true, shareRepeated: true})})
	// listwatch-lists: the recommendation before issue 30 (whole objects
	// sharing only their strings and resource lists), kept to show what
	// ShareRepeated adds.
	registerRealSubject(realSubject{name: "listwatch-lists", baseline: "client-go", kinds: realKindsAll,
		start: startListwatch(listwatchOptions{strip: true, intern: true, shareLists: true})})
	registerRealSubject(realSubject{name: "listwatch-strip", baseline: "client-go", kinds: realKindsAll,
		start: startListwatch(listwatchOptions{strip: true})})
	registerRealSubject(realSubject{name: "listwatch-projection", baseline: "client-go", kinds: []string{"pods"},
		start: func(ctx context.Context, env realEnv) (*realRun, error) {
			return startRestsource[*podPlacement](ctx, env, listwatchOptions{strip: true, intern: true}, &corev1.Pod{})
		}})
}
