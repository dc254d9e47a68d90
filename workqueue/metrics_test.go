package workqueue

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/listwatch/listwatch/workqueue/workqueuetest"
	"k8s.io/utils/clock"
)

func TestMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &workqueuetest.Provider{}
		q := newTestQueue(t, Options[string]{Name: "test", MetricsProvider: p})
		q.Add("a")
		q.Add("b")
		q.Add("a") // collapsed: not counted
		p.Adds.ExpectValue(t, "adds", 2)
		p.Depth.ExpectValue(t, "depth", 2)
		time.Sleep(time.Second)
		a, _ := q.Get()
		p.Depth.ExpectValue(t, "depth", 1)
		p.Latency.ExpectObs(t, "latency", 1)
		time.Sleep(2 * time.Second)
		q.Done(a)
		p.Work.ExpectObs(t, "work duration", 2)
		b, _ := q.Get()
		p.Latency.ExpectObs(t, "latency", 1, 3)
		time.Sleep(1500 * time.Millisecond) // refresh ticks every 500ms since creation
		synctest.Wait()
		p.Unfinished.ExpectValue(t, "unfinished work", 1.5)
		p.Longest.ExpectValue(t, "longest running", 1.5)
		q.Done(b)
		q.AddAfter("c", time.Second)
		q.AddRateLimited("d")
		mustAdd(t, q, "e", AddOptions{After: time.Second}) // not a retry
		p.Retries.ExpectValue(t, "retries", 2)
	})
}

func TestMetricsNeedNameAndProvider(t *testing.T) {
	if q := newTestQueue(t, Options[string]{MetricsProvider: &workqueuetest.Provider{}}); q.metrics != nil {
		t.Fatal("unnamed queue records metrics")
	}
	if q := newTestQueue(t, Options[string]{Name: "x"}); q.metrics != nil {
		t.Fatal("queue without provider records metrics")
	}
}

// countingClock counts clock reads.
type countingClock struct {
	clock.RealClock
	mu    sync.Mutex
	reads int
}

func (c *countingClock) Now() time.Time {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.RealClock.Now()
}

// TestDisabledMetricsAreFree: with metrics off, Add/Get/Done of a known key
// allocates nothing and reads no clock.
func TestDisabledMetricsAreFree(t *testing.T) {
	c := &countingClock{}
	q := newTestQueue(t, Options[string]{Clock: c})
	cycle := func() {
		q.Add("key")
		q.Add("key")
		item, _ := q.Get()
		q.Add("key")
		q.Done(item)
		item, _ = q.Get()
		q.Done(item)
	}
	cycle() // warm up the slab, index and ring
	readsBefore := c.reads
	if allocs := testing.AllocsPerRun(1000, cycle); allocs != 0 {
		t.Fatalf("Add/Get/Done allocates %v times per cycle with metrics off", allocs)
	}
	if c.reads != readsBefore {
		t.Fatalf("%d clock reads with metrics off", c.reads-readsBefore)
	}
}

func BenchmarkMetricsOverhead(b *testing.B) {
	for _, mode := range []string{"off", "on"} {
		b.Run(mode, func(b *testing.B) {
			opts := Options[int]{}
			if mode == "on" {
				opts = Options[int]{Name: "bench", MetricsProvider: discardProvider{}}
			}
			q := New(b.Context(), opts)
			defer q.ShutDown()
			b.ReportAllocs()
			for i := range b.N {
				q.Add(i & 1023)
				item, _ := q.Get()
				q.Done(item)
			}
		})
	}
}

// discardMetric and discardProvider cost a call and nothing else.
type discardMetric struct{}

func (discardMetric) Inc()            {}
func (discardMetric) Dec()            {}
func (discardMetric) Set(float64)     {}
func (discardMetric) Observe(float64) {}

type discardProvider struct{}

func (discardProvider) NewDepthMetric(string) GaugeMetric            { return discardMetric{} }
func (discardProvider) NewAddsMetric(string) CounterMetric           { return discardMetric{} }
func (discardProvider) NewLatencyMetric(string) HistogramMetric      { return discardMetric{} }
func (discardProvider) NewWorkDurationMetric(string) HistogramMetric { return discardMetric{} }
func (discardProvider) NewUnfinishedWorkSecondsMetric(string) SettableGaugeMetric {
	return discardMetric{}
}
func (discardProvider) NewLongestRunningProcessorSecondsMetric(string) SettableGaugeMetric {
	return discardMetric{}
}
func (discardProvider) NewRetriesMetric(string) CounterMetric { return discardMetric{} }

// TestUnfinishedWorkBeyondInflightList covers the slab scan used when more
// items are in flight than the inflight list tracks.
func TestUnfinishedWorkBeyondInflightList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &workqueuetest.Provider{}
		q := newTestQueue(t, Options[int]{Name: "many", MetricsProvider: p})
		for i := range maxInflight + 8 {
			q.Add(i)
		}
		for range maxInflight + 8 {
			q.Get()
		}
		time.Sleep(time.Second) // two refreshes, the last one second after the Gets
		synctest.Wait()
		p.Unfinished.ExpectValue(t, "unfinished work", float64(maxInflight+8))
		p.Longest.ExpectValue(t, "longest running", 1)
		for i := range maxInflight + 8 {
			q.Done(i)
		}
	})
}

// TestNoAllocationsForCompositeKeys: struct keys, including ones holding
// pointers, cost no allocation per Add/Get/Done either.
func TestNoAllocationsForCompositeKeys(t *testing.T) {
	type key struct {
		namespace, name string
		owner           *int
	}
	owner := 1
	q := newTestQueue(t, Options[key]{})
	k := key{"ns", "pod", &owner}
	cycle := func() {
		q.Add(k)
		item, _ := q.Get()
		q.Done(item)
	}
	cycle()
	if allocs := testing.AllocsPerRun(1000, cycle); allocs != 0 {
		t.Fatalf("%v allocations per cycle", allocs)
	}
}
