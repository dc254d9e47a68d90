package bench

import (
	"context"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
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

// liveHeapNow returns the bytes of live heap objects after one collection.
// It is meant for a paused pipeline (see liveProbe), where nothing
// allocates during the collection, so one cycle finds exactly what is
// reachable.
func liveHeapNow() int64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// gate blocks list requests while a live-heap sample is taken.
type gate struct {
	mu     sync.Mutex
	closed bool
	cond   sync.Cond
}

func newGate() *gate {
	g := &gate{}
	g.cond.L = &g.mu
	return g
}

func (g *gate) set(closed bool) {
	g.mu.Lock()
	g.closed = closed
	g.mu.Unlock()
	g.cond.Broadcast()
}

func (g *gate) wait() {
	g.mu.Lock()
	for g.closed {
		g.cond.Wait()
	}
	g.mu.Unlock()
}

// gatedLW is a source whose list requests wait while its gate is closed,
// so that a paused handler also pauses paging. It keeps the wrapped
// source's answer to "streaming lists supported?". Watches pass through.
type gatedLW struct {
	lw   cache.ListerWatcherWithContext
	g    *gate
	noWL bool
}

func newGatedLW(lw cache.ListerWatcher, g *gate) *gatedLW {
	return &gatedLW{lw: cache.ToListerWatcherWithContext(lw), g: g, noWL: watchlist.DoesClientNotSupportWatchListSemantics(lw)}
}

func (l *gatedLW) IsWatchListSemanticsUnSupported() bool { return l.noWL }

func (l *gatedLW) List(opts metav1.ListOptions) (kruntime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

func (l *gatedLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

func (l *gatedLW) ListWithContext(ctx context.Context, opts metav1.ListOptions) (kruntime.Object, error) {
	l.g.wait()
	return l.lw.ListWithContext(ctx, opts)
}

func (l *gatedLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return l.lw.WatchWithContext(ctx, opts)
}

// liveProbe measures the peak live heap of an operation that ends with a
// known number of handler notifications. The handler calls hit on every
// notification; at fixed fractions of the expected count (the first
// notification, 1/4, 1/2, 3/4 and the last but one) hit pauses the
// pipeline and takes a sample:
//
//   - the handler is blocked (it is the caller) and the source's list
//     requests wait at the gate, so no new page enters the informer;
//   - it waits until the process is idle (under 10% of a core for 10 ms):
//     the reflector, queue and processing loop have moved what they hold
//     as far as the blocked handler's buffer;
//   - one runtime.GC with nothing allocating, then /gc/heap/live:bytes,
//     which is then exactly the heap reachable at that point;
//   - the gate opens and the handler returns.
//
// peak is the largest sample minus the live heap before the operation. The
// probe perturbs timing (each sample is a full collection), so benchmarks
// run it on an extra, untimed operation.
type liveProbe struct {
	g     *gate
	at    []int64 // notification counts to sample at, ascending
	n     atomic.Int64
	next  int
	base  int64
	peak  int64
	pause time.Duration
}

func newLiveProbe(g *gate, expected int64) *liveProbe {
	at := []int64{1, expected / 4, expected / 2, 3 * expected / 4, expected - 1}
	return &liveProbe{g: g, at: slices.Compact(at)}
}

// start records the base (live heap before the operation) and arms the
// probe for a new operation.
func (p *liveProbe) start() {
	p.n.Store(0)
	p.next = 0
	p.peak = 0
	p.base = liveHeap()
}

// hit is called by the (single) handler goroutine on every notification.
func (p *liveProbe) hit() {
	n := p.n.Add(1)
	if p.next >= len(p.at) || n != p.at[p.next] {
		return
	}
	p.next++
	t0 := time.Now()
	p.g.set(true)
	waitIdle(10*time.Millisecond, 5*time.Second)
	p.peak = max(p.peak, liveHeapNow()-p.base)
	p.g.set(false)
	p.pause += time.Since(t0)
}

// peakMB is the peak transient live heap of the last operation, in MiB.
func (p *liveProbe) peakMB() float64 { return float64(p.peak) / (1 << 20) }

// waitIdle returns once the process used under 10% of one core over a
// window, or after limit.
func waitIdle(window, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		c0 := cpuTime()
		time.Sleep(window)
		if cpuTime()-c0 < window/10 {
			return
		}
	}
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
