package workqueue

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/utils/clock"
)

// fakeMetric records every update.
type fakeMetric struct {
	mu    sync.Mutex
	value float64
	obs   []float64
}

func (m *fakeMetric) Inc()              { m.add(1) }
func (m *fakeMetric) Dec()              { m.add(-1) }
func (m *fakeMetric) add(d float64)     { m.mu.Lock(); m.value += d; m.mu.Unlock() }
func (m *fakeMetric) Set(v float64)     { m.mu.Lock(); m.value = v; m.mu.Unlock() }
func (m *fakeMetric) Observe(v float64) { m.mu.Lock(); m.obs = append(m.obs, v); m.mu.Unlock() }

func (m *fakeMetric) get() (float64, []float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.value, slices.Clone(m.obs)
}

// fakeProvider hands out one fakeMetric per kind (names are ignored).
type fakeProvider struct {
	depth, adds, latency, work, unfinished, longest, retries fakeMetric
}

func (p *fakeProvider) NewDepthMetric(string) GaugeMetric            { return &p.depth }
func (p *fakeProvider) NewAddsMetric(string) CounterMetric           { return &p.adds }
func (p *fakeProvider) NewLatencyMetric(string) HistogramMetric      { return &p.latency }
func (p *fakeProvider) NewWorkDurationMetric(string) HistogramMetric { return &p.work }
func (p *fakeProvider) NewUnfinishedWorkSecondsMetric(string) SettableGaugeMetric {
	return &p.unfinished
}
func (p *fakeProvider) NewLongestRunningProcessorSecondsMetric(string) SettableGaugeMetric {
	return &p.longest
}
func (p *fakeProvider) NewRetriesMetric(string) CounterMetric { return &p.retries }

func expectValue(t *testing.T, name string, m *fakeMetric, want float64) {
	t.Helper()
	if got, _ := m.get(); got != want {
		t.Fatalf("%s = %v, want %v", name, got, want)
	}
}

func expectObs(t *testing.T, name string, m *fakeMetric, want ...float64) {
	t.Helper()
	if _, got := m.get(); !slices.Equal(got, want) {
		t.Fatalf("%s observations = %v, want %v", name, got, want)
	}
}

func TestMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakeProvider{}
		q := newTestQueue(t, Options[string]{Name: "test", MetricsProvider: p})
		q.Add("a")
		q.Add("b")
		q.Add("a") // collapsed: not counted
		expectValue(t, "adds", &p.adds, 2)
		expectValue(t, "depth", &p.depth, 2)
		time.Sleep(time.Second)
		a, _ := q.Get()
		expectValue(t, "depth", &p.depth, 1)
		expectObs(t, "latency", &p.latency, 1)
		time.Sleep(2 * time.Second)
		q.Done(a)
		expectObs(t, "work duration", &p.work, 2)
		b, _ := q.Get()
		expectObs(t, "latency", &p.latency, 1, 3)
		time.Sleep(1500 * time.Millisecond) // refresh ticks every 500ms since creation
		synctest.Wait()
		expectValue(t, "unfinished work", &p.unfinished, 1.5)
		expectValue(t, "longest running", &p.longest, 1.5)
		q.Done(b)
		q.AddAfter("c", time.Second)
		q.AddRateLimited("d")
		mustAdd(t, q, "e", AddOptions{After: time.Second}) // not a retry
		expectValue(t, "retries", &p.retries, 2)
	})
}

func TestMetricsNeedNameAndProvider(t *testing.T) {
	if q := newTestQueue(t, Options[string]{MetricsProvider: &fakeProvider{}}); q.metrics != nil {
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
		p := &fakeProvider{}
		q := newTestQueue(t, Options[int]{Name: "many", MetricsProvider: p})
		for i := range maxInflight + 8 {
			q.Add(i)
		}
		for range maxInflight + 8 {
			q.Get()
		}
		time.Sleep(time.Second) // two refreshes, the last one second after the Gets
		synctest.Wait()
		expectValue(t, "unfinished work", &p.unfinished, float64(maxInflight+8))
		expectValue(t, "longest running", &p.longest, 1)
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
