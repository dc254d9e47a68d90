package bench

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/store"
)

// cacheStore is the informer's cache, library-neutral.
type cacheStore struct {
	update func(p *corev1.Pod)
	nsList func(ns string) int
}

func newCacheStore(b *testing.B, lib string) cacheStore {
	switch lib {
	case "listwatch":
		s, err := store.New(store.Options[*corev1.Pod]{Indexers: store.Indexers[*corev1.Pod]{"node": nodeIndex}})
		if err != nil {
			b.Fatal(err)
		}
		r := s.Reader()
		return cacheStore{
			update: func(p *corev1.Pod) { _ = s.Upsert(p) },
			nsList: func(ns string) int { return len(r.Namespace(ns).List(labels.Everything())) },
		}
	default:
		idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
			cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
			"node":               func(o any) ([]string, error) { return nodeIndex(o.(*corev1.Pod)) },
		})
		return cacheStore{
			update: func(p *corev1.Pod) { _ = idx.Update(p) },
			nsList: func(ns string) int { return len(mustList(idx, ns)) },
		}
	}
}

// BenchmarkReadsDuringWrites (scenario 5): a cache of 160k pods (1,600 per
// namespace) updated by one writer while 1, 10 or 40 goroutines keep
// listing namespaces the way controllers read (listwatch's Namespace
// reader; client-go's ListAllByNamespace, which generated listers use).
// One op is one write; writes/s and reads/s are over the same interval.
func BenchmarkReadsDuringWrites(b *testing.B) {
	c := theCorpus()
	next := c.gens[0]
	for _, readers := range []int{1, 10, 40} {
		for _, lib := range libs {
			b.Run(fmt.Sprintf("readers=%d/%s", readers, lib), func(b *testing.B) {
				cs := newCacheStore(b, lib)
				for i := range c.list {
					cs.update(&c.list[i])
				}
				want := corpusPods / corpusNamespace
				var reads atomic.Int64
				stop := make(chan struct{})
				var wg sync.WaitGroup
				for g := range readers {
					wg.Go(func() {
						for n := g; ; n++ {
							select {
							case <-stop:
								return
							default:
							}
							if got := cs.nsList("ns-" + strconv.Itoa(n%corpusNamespace)); got != want {
								panic(fmt.Sprintf("listed %d pods, want %d", got, want))
							}
							reads.Add(1)
						}
					})
				}
				time.Sleep(10 * time.Millisecond) // let the readers get going
				b.ResetTimer()
				r0 := reads.Load()
				m := startMeter()
				for i := range b.N {
					cs.update(next[i%len(next)])
				}
				m.stop()
				r1 := reads.Load()
				b.StopTimer()
				close(stop)
				wg.Wait()
				b.ReportMetric(float64(b.N)/m.elapsed.Seconds(), "writes/s")
				b.ReportMetric(float64(r1-r0)/m.elapsed.Seconds(), "reads/s")
			})
		}
	}
}
