package bench

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
)

// BenchmarkStoreOverhead (issue 30): what an informer holds beyond the
// objects it caches, per object, as a client-go factory's informer is
// set up (a namespace index, one handler): listwatch's typed informer, its
// client-go drop-in (clientgo/tools/cache.NewSharedIndexInformer) and client-go's,
// syncing BENCH_OVERHEAD_N pre-decoded pods (10k, 30k and 100k by
// default; the stores' tables double at different sizes) from a streaming
// or a paged feed (the paged one includes each reflector's shallow copy
// of the items, about 1.3 KB each). One op is one sync; overhead-B/obj is
// the live heap after it minus before it, per pod.
// BENCH_OVERHEAD_HEAPPROFILE=prefix writes a heap profile of each synced
// informer to prefix.<lib>.<list> (with -test.memprofilerate 1).
//
//	go test -run '^$' -bench '^BenchmarkStoreOverhead$' -benchtime 1x ./bench/
func BenchmarkStoreOverhead(b *testing.B) {
	all := syncCorpus()[0]
	for _, n := range envInts(b, "BENCH_OVERHEAD_N", []int{10_000, 30_000, 100_000}) {
		items := all[:n]
		for _, list := range []string{"stream", "paged"} {
			for _, lib := range []string{"listwatch", "listwatch-dropin", "client-go"} {
				b.Run(fmt.Sprintf("n=%d/%s/%s", n, list, lib), func(b *testing.B) {
					var total int64
					for range b.N {
						base := liveHeap()
						run := startFactoryLike(b, lib, newFeed(items, "1", list == "paged"), n)
						total += liveHeap() - base
						if p := os.Getenv("BENCH_OVERHEAD_HEAPPROFILE"); p != "" {
							if err := writeHeapProfile(p + "." + lib + "." + list); err != nil {
								b.Fatal(err)
							}
						}
						run()
					}
					b.ReportMetric(float64(total)/float64(b.N*n), "overhead-B/obj")
				})
			}
		}
	}
}

// startFactoryLike starts lib's informer with a namespace index and one
// handler, waits until it has handed every add to the handler, and
// returns its stop.
func startFactoryLike(b *testing.B, lib string, lw cache.ListerWatcher, n int) (stop func()) {
	ctx, cancel := context.WithCancel(b.Context())
	var wg sync.WaitGroup
	cnt := newCounter(int64(n))
	var synced func() bool
	switch lib {
	case "listwatch":
		inf, err := informer.New(informer.Options[*corev1.Pod]{Source: reflector.FromListerWatcher(lw)})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := inf.AddHandler(informer.HandlerFuncs[*corev1.Pod]{AddFunc: func(p *corev1.Pod, _ bool) { cnt.hit(p) }}, informer.HandlerOptions{}); err != nil {
			b.Fatal(err)
		}
		synced = inf.HasSynced
		wg.Go(func() { _ = inf.Run(ctx) })
	default:
		newInformer := cache.NewSharedIndexInformer
		if lib == "listwatch-dropin" {
			newInformer = lwcache.NewSharedIndexInformer
		}
		inf := newInformer(lw, &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(o any) { cnt.hit(o.(*corev1.Pod)) }}); err != nil {
			b.Fatal(err)
		}
		synced = inf.HasSynced
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
	cnt.wait(b, 5*time.Minute)
	waitUntil(b, "synced", time.Minute, synced)
	return func() { cancel(); wg.Wait() }
}
