package bench

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

const (
	fanoutPods = 10_000
	// fanoutRate paces the events (in bursts of fanoutBurst), so that the
	// delivery delays measure the pipeline, not a saturated queue.
	fanoutRate  = 10_000
	fanoutBurst = 50
	slowDelay   = time.Millisecond
)

// fanoutEvents updates the first fanoutPods pods, cycling through their
// three later versions; slotOf maps each event's object to its index.
var fanoutEvents = sync.OnceValues(func() ([]watch.Event, map[*corev1.Pod]int) {
	c := theCorpus()
	ev := make([]watch.Event, 0, 3*fanoutPods)
	slot := make(map[*corev1.Pod]int, 3*fanoutPods)
	for g := range c.gens {
		for i := range fanoutPods {
			slot[c.gens[g][i]] = len(ev)
			ev = append(ev, watch.Event{Type: watch.Modified, Object: c.gens[g][i]})
		}
	}
	return ev, slot
})

// BenchmarkFanout (scenario 6): one informer over 10k pods with 1, 10 or
// 50 fast handlers plus one slow handler (1 ms per notification). One op
// is one update event, sent at 10k events/s; the round ends when every fast handler has seen a
// sentinel pod added after the updates. Reported: CPU, allocations and
// bytes per notification per fast listener, the p50 and p99 delay from
// sending an event to the first fast handler seeing it, and the live-heap
// growth over the round, which is the slow handler's backlog, and the
// peak of the heap (live objects and garbage not yet collected, sampled
// every 5 ms) during the round above the live heap before it. Each
// library uses its default delivery (listwatch coalesces per key for a
// handler that falls behind; client-go buffers every notification).
func BenchmarkFanout(b *testing.B) {
	events, slotOf := fanoutEvents()
	items := theCorpus().list[:fanoutPods]
	for _, fast := range envInts(b, "BENCH_FANOUT_HANDLERS", []int{1, 10, 50}) {
		for _, lib := range libsWithDropin() {
			b.Run(fmt.Sprintf("handlers=%d+slow/%s", fast, lib), func(b *testing.B) {
				benchFanout(b, lib, fast, items, events, slotOf)
			})
		}
	}
}

var sentinelSeq atomic.Int64

func benchFanout(b *testing.B, lib string, fast int, items []corev1.Pod, events []watch.Event, slotOf map[*corev1.Pod]int) {
	sentAt := make([]atomic.Int64, len(events))
	base := time.Now()
	sentinel := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-0",
		Name: "sentinel-" + strconv.FormatInt(sentinelSeq.Add(1), 10), ResourceVersion: "999999999"}}
	var seen sync.WaitGroup
	seen.Add(fast)
	latencies := make([]time.Duration, 0, b.N)
	handlers := []handler{{coalesce: true, fn: func(*corev1.Pod) { time.Sleep(slowDelay) }}}
	for h := range fast {
		var once sync.Once
		fn := func(p *corev1.Pod) {
			if p == sentinel {
				once.Do(seen.Done)
			}
		}
		if h == 0 {
			fn = func(p *corev1.Pod) {
				if p == sentinel {
					once.Do(seen.Done)
					return
				}
				if s, ok := slotOf[p]; ok {
					if t := sentAt[s].Load(); t != 0 {
						latencies = append(latencies, time.Since(base)-time.Duration(t))
					}
				}
			}
		}
		handlers = append(handlers, handler{coalesce: true, fn: fn})
	}
	feed := newFeed(items, "1", true)
	run := start(b, lib, setup{lw: feed, handlers: handlers})
	defer run.stop()
	waitUntil(b, "sync", time.Minute, run.hasSynced)
	heap0 := liveHeap()
	var rvs rvStamper
	rvs.prepare(b.N)
	b.ResetTimer()
	hs := sampleHeap(5 * time.Millisecond)
	m := startMeter()
	stopProfile := spanProfile(b)
	paceStart := time.Now()
	for i := range b.N {
		if i%fanoutBurst == 0 {
			time.Sleep(time.Until(paceStart.Add(time.Duration(i) * time.Second / fanoutRate)))
		}
		s := i % len(events)
		sentAt[s].Store(int64(time.Since(base)))
		feed.ch <- rvs.stamp(events[s])
	}
	feed.ch <- watch.Event{Type: watch.Added, Object: sentinel}
	seen.Wait()
	stopProfile()
	b.StopTimer()
	m.stop()
	peak := hs.finish()
	heap1 := liveHeap()
	notifs := float64(b.N) * float64(fast)
	b.ReportMetric(float64(m.cpuDelta.Nanoseconds())/notifs, "cpu-ns/notif/listener")
	b.ReportMetric(float64(m.allocs)/notifs, "allocs/notif/listener")
	b.ReportMetric(float64(m.bytes)/notifs, "B/notif/listener")
	b.ReportMetric(float64(percentile(latencies, 50).Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(percentile(latencies, 99).Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(heap1-heap0), "slow-backlog-B")
	b.ReportMetric(float64(peak-heap0)/(1<<20), "peak-heap-MB")
}
