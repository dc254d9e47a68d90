package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

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
	// gcs is the number of garbage collections that ended in the span.
	gcs     uint32
	elapsed time.Duration
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
	m.gcs = ms.NumGC - m.ms.NumGC
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

// probedLW is a source through which a liveProbe can pause the informer
// and sample at the end of a list. Without a probe set it only forwards;
// it keeps the wrapped source's answer to "streaming lists supported?".
type probedLW struct {
	lw    cache.ListerWatcherWithContext
	noWL  bool
	probe atomic.Pointer[liveProbe]
}

func newProbedLW(lw cache.ListerWatcher) *probedLW {
	return &probedLW{lw: cache.ToListerWatcherWithContext(lw), noWL: watchlist.DoesClientNotSupportWatchListSemantics(lw)}
}

func (l *probedLW) IsWatchListSemanticsUnSupported() bool { return l.noWL }

func (l *probedLW) List(opts metav1.ListOptions) (kruntime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

func (l *probedLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// ListWithContext waits while the probe samples, and samples before
// handing over the last page of a list of several pages: the reflector then
// holds whatever it keeps of the list before it is complete.
func (l *probedLW) ListWithContext(ctx context.Context, opts metav1.ListOptions) (kruntime.Object, error) {
	p := l.probe.Load()
	if p != nil {
		p.g.wait()
	}
	obj, err := l.lw.ListWithContext(ctx, opts)
	if p != nil && err == nil && opts.Continue != "" {
		if acc, aerr := meta.ListAccessor(obj); aerr == nil && acc.GetContinue() == "" {
			p.sample()
		}
	}
	return obj, err
}

// WatchWithContext forwards a streaming list's events through the probe,
// which samples before the initial-events-end bookmark: the reflector then
// holds the whole streamed list, not yet handed to its queue.
func (l *probedLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := l.lw.WatchWithContext(ctx, opts)
	p := l.probe.Load()
	if p == nil || err != nil || opts.SendInitialEvents == nil || !*opts.SendInitialEvents {
		return w, err
	}
	pw := &probedWatch{w: w, out: make(chan watch.Event), stop: make(chan struct{})}
	go pw.run(p)
	return pw, nil
}

type probedWatch struct {
	w    watch.Interface
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

func (w *probedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *probedWatch) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.w.Stop()
	})
}

// run forwards the stream's events, each only once no sample is in
// progress (the gate), so that a sample pauses a streaming list as it
// pauses a paged one; without the wait, a sample taken in the handler let
// the rest of the stream into the cache while the handler was stalled,
// and its listener's buffer then held every replaced object (a relist's
// peak came out at twice the cache).
func (w *probedWatch) run(p *liveProbe) {
	defer close(w.out)
	for ev := range w.w.ResultChan() {
		p.g.wait()
		if ev.Type == watch.Bookmark {
			if o, err := meta.Accessor(ev.Object); err == nil && o.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
				p.sample()
			}
		}
		select {
		case w.out <- ev:
		case <-w.stop:
			return
		}
	}
}

// liveProbe measures the peak live heap of an operation that ends with a
// known number of handler notifications. It samples at fixed progress
// points: when the last page of a paged list arrives, or the end of a
// streaming list's initial events (the reflector holds the list, before its
// queue does: see probedLW); at the first, 1/4, 1/2, 3/4 and last-but-one
// notification (the handler calls hit); and at the end. A sample:
//
//   - pauses the pipeline: the sampling goroutine (the handler, or the
//     reflector inside a list or watch) is blocked, and list requests and
//     a streaming list's events wait at the gate, so nothing new enters
//     the informer;
//   - waits until no other goroutine runs or is runnable (the scheduler's
//     counts, 5 polls in a row): the reflector, queue and processing loop
//     have moved what they hold as far as they can (a paused handler's
//     notifications wait in its listener's buffer);
//   - runs one runtime.GC with nothing allocating and reads
//     /gc/heap/live:bytes, which is then exactly the heap reachable at that
//     point;
//   - lets the pipeline go on.
//
// peak is the largest sample minus the live heap before the operation;
// end is the last sample's. The probe perturbs timing (each sample is a
// full collection), so benchmarks run it on an extra, untimed operation.
type liveProbe struct {
	g        *gate
	at       []int64 // notification counts to sample at, ascending
	n        atomic.Int64
	next     int
	mu       sync.Mutex // one sample at a time; guards base, peak, last
	base     int64
	peak     int64
	last     int64
	expected int64
}

func newLiveProbe(expected int64) *liveProbe {
	at := []int64{1, expected / 4, expected / 2, 3 * expected / 4, expected - 1}
	return &liveProbe{g: newGate(), at: slices.Compact(at), expected: expected}
}

// start records the base (live heap before the operation) and arms the
// probe for a new operation.
func (p *liveProbe) start() {
	p.n.Store(0)
	p.next = 0
	p.peak, p.last = 0, 0
	p.base = liveHeap()
}

// hit is called by the (single) handler goroutine on every notification.
func (p *liveProbe) hit() {
	n := p.n.Add(1)
	if p.next >= len(p.at) || n != p.at[p.next] {
		return
	}
	p.next++
	p.sample()
}

// sample pauses the pipeline and records the live heap; see liveProbe.
func (p *liveProbe) sample() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.g.set(true)
	waitIdle(5 * time.Second)
	s := liveHeapNow() - p.base
	if os.Getenv("BENCH_PROBE_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, "probe after %d of %d notifications: %.1f MB\n", p.n.Load(), p.expected, float64(s)/(1<<20))
	}
	p.peak, p.last = max(p.peak, s), s
	p.g.set(false)
}

// peakMB is the peak live heap above the base, in MiB.
func (p *liveProbe) peakMB() float64 { return float64(p.peak) / (1 << 20) }

// transientMB is the peak above the last sample (the end state), in MiB:
// what the operation held on the way beyond what it leaves behind.
func (p *liveProbe) transientMB() float64 { return float64(p.peak-p.last) / (1 << 20) }

// waitIdle returns once no goroutine but the caller has been running or
// runnable for a few consecutive polls (the scheduler's own counts, so a
// process starved of CPU by other processes does not pass for idle), or
// after limit.
func waitIdle(limit time.Duration) {
	s := []metrics.Sample{{Name: "/sched/goroutines/running:goroutines"}, {Name: "/sched/goroutines/runnable:goroutines"}}
	deadline := time.Now().Add(limit)
	for quiet := 0; quiet < 5 && time.Now().Before(deadline); {
		time.Sleep(2 * time.Millisecond)
		metrics.Read(s)
		if s[0].Value.Uint64()+s[1].Value.Uint64() <= 1 {
			quiet++
		} else {
			quiet = 0
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

// envList is the comma-separated list in the environment variable name, or
// def when it is unset or empty.
func envList(name string, def []string) []string {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	return strings.Split(v, ",")
}

// envInts is envList for integers; a malformed one fails the benchmark.
func envInts(b *testing.B, name string, def []int) []int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			b.Fatalf("%s: %q is not a count", name, f)
		}
		out = append(out, n)
	}
	return out
}

// envDuration is the duration in the environment variable name, 0 when it
// is unset; a malformed one fails the benchmark.
func envDuration(b *testing.B, name string) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return d
}
