package store_test

import (
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	"github.com/listwatch/listwatch/store"
)

// Benchmarks run listwatch and client-go side by side on the same data:
// benchObjects pods in benchNamespaces namespaces, with two indexes
// (namespace and node) on both sides.
const (
	benchObjects    = 10000
	benchNamespaces = 100
)

func benchPods(gen int) []*corev1.Pod {
	pods := make([]*corev1.Pod, benchObjects)
	for i := range pods {
		p := pod("ns-"+strconv.Itoa(i%benchNamespaces), "pod-"+strconv.Itoa(i), "node-"+strconv.Itoa(i%50),
			map[string]string{"app": "app-" + strconv.Itoa(i%7)})
		p.ResourceVersion = strconv.Itoa(gen*benchObjects + i)
		pods[i] = p
	}
	return pods
}

func nodeOf(p *corev1.Pod) ([]string, error) { return []string{p.Spec.NodeName}, nil }

func newBenchStore(b *testing.B, opts store.Options[*corev1.Pod]) *store.Store[*corev1.Pod] {
	s, err := store.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func benchIndexers() cache.Indexers {
	return cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		"node":               func(obj any) ([]string, error) { return nodeOf(obj.(*corev1.Pod)) },
	}
}

// impl is one side of a benchmark: a writer and the reads under test.
type impl struct {
	name    string
	upsert  func(*corev1.Pod)
	list    func() int
	byIndex func(ns string) int
	nsList  func(ns string) int
}

// typedImpl benchmarks a Store[T] built with opts.
func typedImpl(b *testing.B, name string, opts store.Options[*corev1.Pod]) impl {
	s := newBenchStore(b, opts)
	r := s.Reader()
	return impl{
		name:    name,
		upsert:  func(p *corev1.Pod) { _ = s.Upsert(p) },
		list:    func() int { return len(r.List()) },
		byIndex: func(ns string) int { l, _ := r.ByIndex(store.NamespaceIndex, ns); return len(l) },
		nsList:  func(ns string) int { return len(r.Namespace(ns).List(labels.Everything())) },
	}
}

// impls returns, in this order: the typed store with the node index as an
// IndexFunc (like client-go's), the typed store with it as a ValueIndexFunc,
// the client-go drop-in, and client-go.
func impls(b *testing.B) []impl {
	node := func(p *corev1.Pod) (string, bool) { return p.Spec.NodeName, true }
	cg := cache.NewIndexer(cache.MetaNamespaceKeyFunc, benchIndexers())
	cgLister := corev1listers.NewPodLister(cg)
	di := lwcache.NewIndexer(cache.MetaNamespaceKeyFunc, benchIndexers())
	diLister := corev1listers.NewPodLister(di)
	return []impl{
		typedImpl(b, "listwatch", store.Options[*corev1.Pod]{Indexers: store.Indexers[*corev1.Pod]{"node": nodeOf}}),
		typedImpl(b, "listwatch-valueindex", store.Options[*corev1.Pod]{ValueIndexers: store.ValueIndexers[*corev1.Pod]{"node": node}}),
		{
			name:    "listwatch-dropin",
			upsert:  func(p *corev1.Pod) { _ = di.Update(p) },
			list:    func() int { return len(di.List()) },
			byIndex: func(ns string) int { l, _ := di.ByIndex(cache.NamespaceIndex, ns); return len(l) },
			nsList:  func(ns string) int { l, _ := diLister.Pods(ns).List(labels.Everything()); return len(l) },
		},
		{
			name:    "client-go",
			upsert:  func(p *corev1.Pod) { _ = cg.Update(p) },
			list:    func() int { return len(cg.List()) },
			byIndex: func(ns string) int { l, _ := cg.ByIndex(cache.NamespaceIndex, ns); return len(l) },
			nsList:  func(ns string) int { l, _ := cgLister.Pods(ns).List(labels.Everything()); return len(l) },
		},
	}
}

// populated returns the implementations filled with pods.
func populated(b *testing.B, pods []*corev1.Pod) []impl {
	all := impls(b)
	for _, im := range all {
		for _, p := range pods {
			im.upsert(p)
		}
	}
	return all
}

// BenchmarkAdd inserts new objects (the store is refilled every
// benchObjects iterations, outside the timer).
func BenchmarkAdd(b *testing.B) {
	pods := benchPods(0)
	for i := range impls(b) {
		b.Run(impls(b)[i].name, func(b *testing.B) {
			b.ReportAllocs()
			var im impl
			for n := 0; b.Loop(); n++ {
				if n%benchObjects == 0 {
					b.StopTimer()
					im = impls(b)[i]
					b.StartTimer()
				}
				im.upsert(pods[n%benchObjects])
			}
		})
	}
}

// BenchmarkUpdate replaces stored objects with new versions whose index
// values are unchanged: the steady-state watch event.
func BenchmarkUpdate(b *testing.B) {
	pods, next := benchPods(0), benchPods(1)
	for _, im := range populated(b, pods) {
		b.Run(im.name, func(b *testing.B) {
			b.ReportAllocs()
			for n := 0; b.Loop(); n++ {
				im.upsert(next[n%benchObjects])
			}
		})
	}
}

// BenchmarkUpdateMovingIndex updates objects whose node changes.
func BenchmarkUpdateMovingIndex(b *testing.B) {
	pods, moved := benchPods(0), benchPods(1)
	for _, p := range moved {
		p.Spec.NodeName += "-moved"
	}
	for _, im := range populated(b, pods) {
		b.Run(im.name, func(b *testing.B) {
			b.ReportAllocs()
			for n := 0; b.Loop(); n++ {
				if n/benchObjects%2 == 0 {
					im.upsert(moved[n%benchObjects])
				} else {
					im.upsert(pods[n%benchObjects])
				}
			}
		})
	}
}

// BenchmarkByIndex queries the namespace index for one namespace's objects.
func BenchmarkByIndex(b *testing.B) {
	for _, im := range populated(b, benchPods(0)) {
		b.Run(im.name, func(b *testing.B) {
			b.ReportAllocs()
			for n := 0; b.Loop(); n++ {
				if im.byIndex("ns-"+strconv.Itoa(n%benchNamespaces)) != benchObjects/benchNamespaces {
					b.Fatal("wrong count")
				}
			}
		})
	}
}

// BenchmarkList lists every object.
func BenchmarkList(b *testing.B) {
	for _, im := range populated(b, benchPods(0)) {
		b.Run(im.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if im.list() != benchObjects {
					b.Fatal("wrong count")
				}
			}
		})
	}
}

// BenchmarkNamespaceList lists one namespace the way controllers do
// (client-go's generated lister; listwatch's Namespace reader).
func BenchmarkNamespaceList(b *testing.B) {
	for _, im := range populated(b, benchPods(0)) {
		b.Run(im.name, func(b *testing.B) {
			b.ReportAllocs()
			for n := 0; b.Loop(); n++ {
				if im.nsList("ns-"+strconv.Itoa(n%benchNamespaces)) != benchObjects/benchNamespaces {
					b.Fatal("wrong count")
				}
			}
		})
	}
}

// BenchmarkWriteWhileListingNamespaces measures update cost while two
// reader goroutines list namespaces continuously, the way controllers read
// (client-go's lister; listwatch's Namespace reader). ns/op is per write;
// reads/op is how many lists completed per write.
func BenchmarkWriteWhileListingNamespaces(b *testing.B) {
	benchWriteWhileReading(b, func(im impl, n int) { im.nsList("ns-" + strconv.Itoa(n%benchNamespaces)) })
}

// BenchmarkWriteWhileListingAll is the same with readers listing every
// object, which holds the read lock for a copy of the whole store.
func BenchmarkWriteWhileListingAll(b *testing.B) {
	benchWriteWhileReading(b, func(im impl, _ int) { im.list() })
}

func benchWriteWhileReading(b *testing.B, read func(im impl, n int)) {
	pods, next := benchPods(0), benchPods(1)
	for _, im := range populated(b, pods) {
		b.Run(im.name, func(b *testing.B) {
			b.ReportAllocs()
			stop := make(chan struct{})
			var readers sync.WaitGroup
			counts := make([]int, 2)
			for g := range counts {
				readers.Go(func() {
					for n := g; ; n++ {
						select {
						case <-stop:
							return
						default:
						}
						read(im, n)
						counts[g]++
					}
				})
			}
			for n := 0; b.Loop(); n++ {
				im.upsert(next[n%benchObjects])
			}
			close(stop)
			readers.Wait()
			b.ReportMetric(float64(counts[0]+counts[1])/float64(b.N), "reads/op")
		})
	}
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() int64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	return int64(sample[0].Value.Uint64())
}

// BenchmarkMemory reports the heap cost per object of the store and its
// two indexes (key strings included, the objects themselves excluded).
func BenchmarkMemory(b *testing.B) {
	pods := benchPods(0)
	for i, im := range impls(b) {
		b.Run(im.name, func(b *testing.B) {
			var perObject float64
			for b.Loop() {
				before := liveHeap()
				im := impls(b)[i]
				for _, p := range pods {
					im.upsert(p)
				}
				perObject = float64(liveHeap()-before) / benchObjects
				runtime.KeepAlive(im)
			}
			b.ReportMetric(perObject, "B/obj")
		})
	}
}
