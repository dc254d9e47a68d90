package bench

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// steadyEvents cycles over the first steadyPods pods in blocks of
// steadyBlock: each pod of a block is updated, updated again, deleted and
// re-added, one phase of the block after the other, so that consecutive
// events are for different pods (as in a real stream) and the cached set
// never drops by more than one block. Each event has an object of its own
// (a deletion's is a copy of the last update's), so that rvStamper can
// give each one the resource version it is sent with.
var steadyEvents = sync.OnceValue(func() []watch.Event {
	c := theCorpus()
	deleted := make([]corev1.Pod, steadyPods)
	for i := range deleted {
		deleted[i] = *c.gens[1][i]
	}
	ev := make([]watch.Event, 0, 4*steadyPods)
	for lo := 0; lo < steadyPods; lo += steadyBlock {
		for phase := range 4 {
			for i := lo; i < lo+steadyBlock; i++ {
				switch phase {
				case 0:
					ev = append(ev, watch.Event{Type: watch.Modified, Object: c.gens[0][i]})
				case 1:
					ev = append(ev, watch.Event{Type: watch.Modified, Object: c.gens[1][i]})
				case 2:
					ev = append(ev, watch.Event{Type: watch.Deleted, Object: &deleted[i]})
				default:
					ev = append(ev, watch.Event{Type: watch.Added, Object: c.gens[2][i]})
				}
			}
		}
	}
	return ev
})

const steadyBlock = 500

// counter counts notifications and signals when the count reaches target.
type counter struct {
	n, target atomic.Int64
	reached   chan struct{}
}

func newCounter(target int64) *counter {
	c := &counter{reached: make(chan struct{}, 1)}
	c.target.Store(target)
	return c
}

func (c *counter) hit(*corev1.Pod) {
	if c.n.Add(1) == c.target.Load() {
		c.reached <- struct{}{}
	}
}

// expect sets the next target, n more notifications from now.
func (c *counter) expect(n int64) { c.target.Store(c.n.Load() + n) }

func (c *counter) wait(b *testing.B, timeout time.Duration) {
	select {
	case <-c.reached:
	case <-time.After(timeout):
		b.Fatalf("timed out: %d of %d notifications", c.n.Load(), c.target.Load())
	}
}

// BenchmarkSteadyState (scenario 1): pre-decoded watch events, an
// add/update/delete mix over 100k cached pods, through the whole informer
// (queue, store with the namespace and node indexes, one handler). One op
// is one event; both queues deliver every event in order (client-go's
// RealFIFO; listwatch InOrder) so that the handler sees each of them.
// Each library indexes by node its own idiomatic way (see start):
// client-go with an IndexFunc, listwatch with a single-valued
// store.ValueIndexFunc (informer.Options.ValueIndexers), which a listwatch
// user would pick for a one-value index and which allocates nothing. A
// third subject, listwatch-dropin, is client-go's code with the import
// prefix changed (clientgo/tools/cache's NewSharedIndexInformer, client-go's
// IndexFunc and handler): the path most users switch to first.
// BENCH_SPAN_CPUPROFILE=file profiles the measured span only.
// The informer is synced once per sub-benchmark and reused across b.N
// rounds.
//
// GCs is the number of collections that ended in the span. Each marks the
// whole heap (the corpus and 100k cached pods, about 1.6 GB), so the CPU
// per event depends on how many fall inside it: hack/bench.sh runs
// 2,000,000 events, several collections for both libraries, so that the
// collector's cost is spread over the events that cause it as in a
// long-running informer. With 200,000 events client-go's span held zero
// or one collection and its cpu-ns/event swung between about 2,800 and
// 6,000 from run to run.
func BenchmarkSteadyState(b *testing.B) {
	items := theCorpus().list[:steadyPods]
	events := steadyEvents()
	for _, lib := range []string{"listwatch", "listwatch-dropin", "client-go"} {
		var (
			run  *running
			feed *feedLW
			cnt  *counter
			next int
			rvs  rvStamper
		)
		b.Run(lib, func(b *testing.B) {
			if run == nil {
				feed = newFeed(items, "1", true)
				cnt = newCounter(int64(len(items)))
				run = start(b, lib, setup{lw: feed, inOrderQueue: true, handlers: []handler{{fn: cnt.hit}}})
				cnt.wait(b, 5*time.Minute)
				liveHeap()
			}
			cnt.expect(int64(b.N))
			rvs.prepare(b.N)
			b.ResetTimer()
			m := startMeter()
			stopProfile := spanProfile(b)
			for range b.N {
				feed.ch <- rvs.stamp(events[next%len(events)])
				next++
			}
			cnt.wait(b, 5*time.Minute)
			stopProfile()
			b.StopTimer()
			m.report(b, float64(b.N), "event")
			b.ReportMetric(float64(m.gcs), "GCs")
		})
		if run != nil {
			run.stop()
		}
	}
}

// BenchmarkSteadyStateFloor is the part of BenchmarkSteadyState's CPU per
// event that both libraries share and neither can remove: the benchmark's
// own feed (one channel send per event to a goroutine that receives it,
// as each reflector does) and the counting handler touching each pod, with
// no informer in between. Subtract it from both libraries' cpu-ns/event to
// compare the informers net of the harness.
func BenchmarkSteadyStateFloor(b *testing.B) {
	events := steadyEvents()
	ch := make(chan watch.Event, 1024)
	cnt := newCounter(int64(b.N))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range ch {
			p := ev.Object.(*corev1.Pod)
			_ = p.GetResourceVersion() // first touch of the object, as a reflector does
			cnt.hit(p)
		}
	}()
	b.ResetTimer()
	m := startMeter()
	for i := range b.N {
		ch <- events[i%len(events)]
	}
	cnt.wait(b, 5*time.Minute)
	b.StopTimer()
	m.report(b, float64(b.N), "event")
	close(ch)
	<-done
}
