package deltafifo

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func benchPods(n int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: fmt.Sprintf("ns-%d", i%10), Name: fmt.Sprintf("pod-%d", i), ResourceVersion: "1",
		}}
	}
	return pods
}

// benchQueue is the common surface of the queues under comparison.
type benchQueue interface {
	add(any) error
	pop() error
	replace(typed []*corev1.Pod, untyped []any) error
}

type typedBench struct{ f *FIFO[*corev1.Pod] }

func discard(string, []Delta[*corev1.Pod], bool) error { return nil }

func (t typedBench) add(o any) error { return t.f.Add(o.(*corev1.Pod)) }
func (t typedBench) pop() error      { return t.f.Pop(context.Background(), discard) }
func (t typedBench) replace(typed []*corev1.Pod, _ []any) error {
	return t.f.Replace(typed, "1")
}

func discardAny(any, bool) error { return nil }

type cacheBench struct{ q cache.Queue }

func (c cacheBench) add(o any) error { return c.q.Add(o) }
func (c cacheBench) pop() error {
	_, err := c.q.Pop(discardAny)
	return err
}
func (c cacheBench) replace(_ []*corev1.Pod, untyped []any) error { return c.q.Replace(untyped, "1") }

// benchImpls builds each implementation fresh. Order: ours first, then
// client-go's counterpart.
var benchImpls = []struct {
	name string
	make func(b *testing.B) benchQueue
}{
	{"listwatch", func(b *testing.B) benchQueue { return typedBench{New(b.Context(), Options[*corev1.Pod]{})} }},
	{"listwatch-dropin", func(*testing.B) benchQueue {
		return cacheBench{newDeltaFIFOWithOptions(cache.DeltaFIFOOptions{EmitDeltaTypeReplaced: true})}
	}},
	{"client-go-DeltaFIFO", func(*testing.B) benchQueue {
		return cacheBench{cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{EmitDeltaTypeReplaced: true})}
	}},
	{"listwatch-inorder", func(b *testing.B) benchQueue {
		return typedBench{New(b.Context(), Options[*corev1.Pod]{InOrder: true})}
	}},
	{"client-go-RealFIFO", func(*testing.B) benchQueue {
		return cacheBench{cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KnownObjects: cache.NewStore(cache.MetaNamespaceKeyFunc)})}
	}},
}

// BenchmarkAddPop measures one event through the queue in steady state:
// one Add and one Pop per op, with 64 other keys queued. allocs/op is
// allocations per event.
func BenchmarkAddPop(b *testing.B) {
	const depth, pool = 64, 1024
	pods := benchPods(pool)
	for _, impl := range benchImpls {
		b.Run(impl.name, func(b *testing.B) {
			q := impl.make(b)
			for i := range depth {
				if err := q.add(pods[i]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			i := depth
			for b.Loop() {
				if err := q.add(pods[i%pool]); err != nil {
					b.Fatal(err)
				}
				if err := q.pop(); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkReplace100k measures one Replace of 100,000 objects into an
// empty queue. peak-heap-MB is the highest live heap seen during the call
// above the level before it; retained-MB is what the queue holds afterwards.
func BenchmarkReplace100k(b *testing.B) {
	const n = 100_000
	pods := benchPods(n)
	untyped := make([]any, n)
	for i, p := range pods {
		untyped[i] = p
	}
	for _, impl := range benchImpls {
		b.Run(impl.name, func(b *testing.B) {
			b.ReportAllocs()
			var peak, retained float64
			for b.Loop() {
				b.StopTimer()
				q := impl.make(b)
				runtime.GC()
				base := heapObjectBytes()
				s := startHeapSampler()
				b.StartTimer()
				if err := q.replace(pods, untyped); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				peak = max(peak, float64(s.stop()-base)/(1<<20))
				runtime.GC()
				retained = max(retained, float64(heapObjectBytes()-base)/(1<<20))
				runtime.KeepAlive(q)
				b.StartTimer()
			}
			b.ReportMetric(peak, "peak-heap-MB")
			b.ReportMetric(retained, "retained-MB")
		})
	}
}

func heapObjectBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// heapSampler polls the heap size in the background and keeps the maximum.
type heapSampler struct {
	done chan struct{}
	wg   sync.WaitGroup
	peak uint64
}

func startHeapSampler() *heapSampler {
	s := &heapSampler{done: make(chan struct{}), peak: heapObjectBytes()}
	s.wg.Go(func() {
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				s.peak = max(s.peak, heapObjectBytes())
			}
		}
	})
	return s
}

// stop ends sampling and returns the peak, including the heap at the end.
func (s *heapSampler) stop() uint64 {
	close(s.done)
	s.wg.Wait()
	return max(s.peak, heapObjectBytes())
}

// BenchmarkRelistWithBacklog measures the FIFO's part of an informer's
// relist that begins while watch events are still queued: 1,000 keys
// queued, then a list of 10,000 objects in pages of 500 (half of the
// backlog's keys among them), then its end, then everything popped in
// batches with PopBatch, as the informer pops. "flag" is Options.ListMarks alone (the FIFO keeps
// the backlog's keys at the list's begin and queues the deletions of those
// the list lacks); "positions" adds Options.MarkPositions (the backlog is
// handed out before the ListBegin, the consumer's sweep finds the rest).
// One op is one relist.
func BenchmarkRelistWithBacklog(b *testing.B) {
	const backlog, listed, page = 1_000, 10_000, 500
	pods := benchPods(listed + backlog/2)
	for _, v := range []struct {
		name      string
		positions bool
	}{{"flag", false}, {"positions", true}} {
		b.Run(v.name, func(b *testing.B) {
			f := New(b.Context(), Options[*corev1.Pod]{ListMarks: true, MarkPositions: v.positions})
			drain := func(items []Item[*corev1.Pod], _ bool) error { return nil }
			b.ReportAllocs()
			for b.Loop() {
				for _, p := range pods[listed-backlog/2:] {
					if err := f.Update(p); err != nil {
						b.Fatal(err)
					}
				}
				for i := 0; i < listed; i += page {
					if err := f.ReplacePage(pods[i:i+page], i == 0); err != nil {
						b.Fatal(err)
					}
				}
				if err := f.ReplaceEnd("2"); err != nil {
					b.Fatal(err)
				}
				for f.Len() > 0 {
					if err := f.PopBatch(b.Context(), drain); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
