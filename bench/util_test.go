package bench

import (
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

func intstrPort(p int) intstr.IntOrString { return intstr.FromInt(p) }

// cpuTime is the process's user+sys CPU time: every goroutine of every
// pipeline stage, and the garbage collector.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// meter measures CPU time, allocations and bytes over a span of a
// benchmark and reports them per unit of work.
type meter struct {
	cpu      time.Duration
	ms       runtime.MemStats
	wall     time.Time
	stopped  bool
	cpuDelta time.Duration
	allocs   uint64
	bytes    uint64
	elapsed  time.Duration
}

func startMeter() *meter {
	m := &meter{}
	runtime.ReadMemStats(&m.ms)
	m.cpu, m.wall = cpuTime(), time.Now()
	return m
}

func (m *meter) stop() *meter {
	if m.stopped {
		return m
	}
	m.stopped = true
	m.elapsed, m.cpuDelta = time.Since(m.wall), cpuTime()-m.cpu
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.allocs, m.bytes = ms.Mallocs-m.ms.Mallocs, ms.TotalAlloc-m.ms.TotalAlloc
	return m
}

// report reports cpu-ns, allocs and B per unit, and units/s of wall time.
func (m *meter) report(b *testing.B, units float64, unit string) {
	m.stop()
	b.ReportMetric(float64(m.cpuDelta.Nanoseconds())/units, "cpu-ns/"+unit)
	b.ReportMetric(float64(m.allocs)/units, "allocs/"+unit)
	b.ReportMetric(float64(m.bytes)/units, "B/"+unit)
	b.ReportMetric(units/m.elapsed.Seconds(), unit+"s/s")
}

// liveHeap returns the bytes of live heap objects after two collections.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

func heapObjects() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// peakSampler polls the heap (live and not yet collected objects) every
// millisecond and keeps the highest value seen.
type peakSampler struct {
	peak atomic.Int64
	stop chan struct{}
	done sync.WaitGroup
}

func samplePeak() *peakSampler {
	p := &peakSampler{stop: make(chan struct{})}
	p.peak.Store(heapObjects())
	p.done.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				if h := heapObjects(); h > p.peak.Load() {
					p.peak.Store(h)
				}
			}
		}
	})
	return p
}

func (p *peakSampler) finish() int64 {
	close(p.stop)
	p.done.Wait()
	if h := heapObjects(); h > p.peak.Load() {
		p.peak.Store(h)
	}
	return p.peak.Load()
}

// percentile returns the p-th percentile (0..100) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p/100))]
}

// waitUntil polls cond every 100µs until it holds or timeout passes.
func waitUntil(b *testing.B, what string, timeout time.Duration, cond func() bool) {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}
