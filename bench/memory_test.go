package bench

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/restsource"
	"github.com/listwatch/listwatch/store"
)

// memoryPods is the size of the memory benchmark's cache.
const memoryPods = 10_000

// memoryCorpus is memoryPods pods (objects.RealisticPod of
// objects.MixedShape: as a real kube-apiserver serves a Deployment's pods
// after a few controllers have touched them), as a list holds them, and,
// as watch events, three later versions of each (nextVersion: new
// resourceVersion, one more label).
var memoryCorpus = sync.OnceValues(func() ([]corev1.Pod, []watch.Event) {
	items := make([]corev1.Pod, memoryPods)
	for i := range items {
		items[i] = *objects.RealisticPod(i, objects.MixedShape(i))
	}
	events := make([]watch.Event, 0, 3*memoryPods)
	for g := 1; g <= 3; g++ {
		for i := range items {
			events = append(events, watch.Event{Type: watch.Modified, Object: nextVersion(&items[i], g)})
		}
	}
	return items, events
})

// memorySubject is one way of caching the pods.
type memorySubject struct {
	name string
	lib  string
	// restsource: listwatch's decoder with these options, else the
	// clientset's (client-go's REST decoding).
	restsource bool
	opts       restsource.Options
	intern     bool // opts.Interner: a new Interner of the default size
	// transform strips managedFields after decoding: listwatch's
	// informer.StripManagedFields, or controller-runtime's
	// TransformStripManagedFields on client-go's informer.
	transform bool
	// projection caches podPlacements (a projection of the pods) instead;
	// metadataOnly podMetadata.
	projection, metadataOnly bool
}

// podPlacement is a projection of corev1.Pod, as a controller that only
// places pods would declare it: metadata, node and phase (restsource
// decodes nothing else).
type podPlacement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec              struct {
		NodeName string `json:"nodeName,omitempty" protobuf:"bytes,10,opt,name=nodeName"`
	} `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status struct {
		Phase corev1.PodPhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=PodPhase"`
	} `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// podMetadata is the projection of corev1.Pod to its metadata: a
// metadata-only cache through restsource, whatever the server sends.
type podMetadata struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
}

func (p *podMetadata) DeepCopyObject() kruntime.Object {
	q := *p
	p.ObjectMeta.DeepCopyInto(&q.ObjectMeta)
	return &q
}

func (p *podPlacement) DeepCopyObject() kruntime.Object {
	q := *p
	p.ObjectMeta.DeepCopyInto(&q.ObjectMeta)
	return &q
}

var memorySubjects = []memorySubject{
	{name: "listwatch", lib: "listwatch", restsource: true, opts: restsource.Options{StripManagedFields: true, ShareRepeated: true}, intern: true},
	{name: "listwatch-lists", lib: "listwatch", restsource: true, opts: restsource.Options{StripManagedFields: true, ShareResourceLists: true}, intern: true},
	{name: "listwatch-projection", lib: "listwatch", restsource: true, opts: restsource.Options{StripManagedFields: true}, intern: true, projection: true},
	{name: "listwatch-metadata", lib: "listwatch", restsource: true, opts: restsource.Options{StripManagedFields: true}, intern: true, metadataOnly: true},
	{name: "listwatch-nosharing", lib: "listwatch", restsource: true, opts: restsource.Options{StripManagedFields: true}, intern: true},
	{name: "listwatch-nointern", lib: "listwatch", restsource: true, opts: restsource.Options{StripManagedFields: true}},
	{name: "listwatch-transform", lib: "listwatch", restsource: true, transform: true},
	{name: "client-go", lib: "client-go", transform: true},
}

// BenchmarkMemory (issue 16) is the fast regression check of the memory
// options on a synthetic corpus, in one process; the claim is
// BenchmarkRealMemory's, on a real kube-apiserver (the synthetic pods
// repeat more than a cluster's do). It reports bytes per cached object and
// the CPU of one watch event, listwatch with the recommended memory
// options (restsource with StripManagedFields, an Interner and
// ShareRepeated; listwatch-lists has ShareResourceLists instead, the
// recommendation before issue 30) against
// client-go's informer with controller-runtime's
// TransformStripManagedFields, on memoryPods realistic pods (with
// managedFields) served as protobuf and as JSON by the httptest apiserver.
// listwatch-projection caches podPlacements, a projection of the pods
// (metadata, node and phase; Options.ProjectionOf), with StripManagedFields
// and an Interner; listwatch-metadata the same with metadata only (a
// metadata-only cache through restsource). Three more listwatch subjects split the gain:
// listwatch-nosharing (no
// ShareResourceLists), listwatch-nointern (stripping while decoding only)
// and listwatch-transform (restsource without options, stripping with
// informer.StripManagedFields, as before issue 16).
//
// Per sub-benchmark the informer (namespace and node indexes, one
// in-order handler) syncs once; live-B/obj is the live heap it then holds
// (after two collections, minus the heap before it started) per cached
// pod, decoder and connection buffers and the Interner's table included.
// One op is then one MODIFIED event (a new version of a cached pod)
// decoded and applied: cpu-ns/event is the process's CPU per event, every
// goroutine and the GC included. intern-hit-% is the Interner's string
// hit rate after the sync and the events.
func BenchmarkMemory(b *testing.B) {
	items, events := memoryCorpus()
	srv := podServerFor(b, items)
	srv.setEvents(events)
	for _, ct := range []struct{ name, contentType string }{{"protobuf", protobufType}, {"json", jsonType}} {
		for _, subject := range memorySubjects {
			var (
				run     *running
				cnt     *counter
				in      *restsource.Interner
				perObj  float64
				next    int
				started bool
			)
			b.Run(ct.name+"/"+subject.name, func(b *testing.B) {
				if !started {
					started = true
					cnt = newCounter(int64(len(items)))
					cs := srv.clientset(b, ct.contentType) // pre-encodes the lists: not counted
					base := liveHeap()
					var lw cache.ListerWatcher = srv.listWatch(b, ct.contentType)
					if subject.restsource {
						opts := subject.opts
						opts.Client, opts.Resource, opts.ContentType = cs.CoreV1().RESTClient(), "pods", ct.contentType
						if subject.intern {
							in = restsource.NewInterner(0)
							opts.Interner = in
						}
						var err error
						switch {
						case subject.projection:
							opts.ProjectionOf = &corev1.Pod{}
							lw, err = restsource.New[*podPlacement](opts)
						case subject.metadataOnly:
							opts.ProjectionOf = &corev1.Pod{}
							lw, err = restsource.New[*podMetadata](opts)
						default:
							lw, err = restsource.New[*corev1.Pod](opts)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					switch {
					case subject.projection:
						run = startProjection(b, lw, func(p *podPlacement) string { return p.Spec.NodeName }, func() { cnt.hit(nil) })
					case subject.metadataOnly:
						run = startProjection(b, lw, func(*podMetadata) string { return "" }, func() { cnt.hit(nil) })
					default:
						run = startMemory(b, subject, lw, cnt.hit)
					}
					cnt.wait(b, 5*time.Minute)
					waitUntil(b, "synced", time.Minute, run.hasSynced)
					perObj = float64(liveHeap()-base) / float64(len(items))
					if n := countCached(run, items); n != len(items) {
						b.Fatalf("%d pods cached, want %d", n, len(items))
					}
				}
				cnt.expect(int64(b.N))
				runtime.GC()
				b.ResetTimer()
				m := startMeter()
				for range b.N {
					srv.live <- next % len(events)
					next++
				}
				cnt.wait(b, 5*time.Minute)
				b.StopTimer()
				m.report(b, float64(b.N), "event")
				b.ReportMetric(perObj, "live-B/obj")
				if in != nil {
					b.ReportMetric(100*in.Stats().HitRate(), "intern-hit-%")
				}
			})
			if run != nil {
				run.stop()
			}
		}
	}
}

// countCached counts the pods cached, namespace by namespace.
func countCached(run *running, items []corev1.Pod) int {
	seen := map[string]bool{}
	n := 0
	for i := range items {
		if ns := items[i].Namespace; !seen[ns] {
			seen[ns] = true
			n += run.nsList(ns)
		}
	}
	return n
}

// startProjection starts a listwatch informer of projections with the
// namespace and node indexes (node: the node's name, if it has one) and one
// in-order handler fn.
func startProjection[T store.Object](b *testing.B, lw cache.ListerWatcher, node func(T) string, fn func()) *running {
	inf, err := informer.New(informer.Options[T]{Source: reflector.FromListerWatcher(lw), OrderedQueue: true,
		ValueIndexers: store.ValueIndexers[T]{"node": func(p T) (string, bool) { n := node(p); return n, n != "" }}})
	if err != nil {
		b.Fatal(err)
	}
	mode := informer.InOrder
	if _, err := inf.AddHandler(informer.HandlerFuncs[T]{
		AddFunc:    func(T, bool) { fn() },
		UpdateFunc: func(_, _ T) { fn() },
		DeleteFunc: func(T, bool) { fn() },
	}, informer.HandlerOptions{Delivery: &mode}); err != nil {
		b.Fatal(err)
	}
	// BenchmarkMemory starts it in the first run of a sub-benchmark and
	// reuses it in the later runs, each of which has a b.Context() of its
	// own; running.stop ends it.
	ctx, cancel := context.WithCancel(context.Background()) //lint:allow-background outlives one run of the benchmark function; stopped by running.stop
	var wg sync.WaitGroup
	wg.Go(func() { _ = inf.Run(ctx) })
	rd := inf.Reader()
	return &running{hasSynced: inf.HasSynced, nsList: func(ns string) int { return len(rd.Namespace(ns).List(labels.Everything())) },
		stop: func() { cancel(); wg.Wait() }}
}

// startMemory is start (subject_test.go) with one in-order handler fn,
// stripping managedFields in the informer when the subject asks for it.
func startMemory(b *testing.B, s memorySubject, lw cache.ListerWatcher, fn func(*corev1.Pod)) *running {
	return start(b, s.lib, setup{lw: lw, inOrderQueue: true, handlers: []handler{{fn: fn}}, stripManagedFields: s.transform})
}
