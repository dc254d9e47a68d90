package bench

import (
	"context"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"

	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/restsource"
)

// scaleSizes are the points of the scale curve. Realistic pods at 1M need
// about 40 GiB for the in-process source and both caches, more than the
// development machine has: that point runs only with BENCH_SCALE_BIG=1 and
// is otherwise extrapolated (docs/benchmarks/synthetic-memory-and-scale.md,
// "Scale curve").
var scaleSizes = []int{10_000, 100_000, 1_000_000}

// scaleKind is one kind of object on the curve.
type scaleKind struct {
	name string
	// bigN is the smallest N that runs only with BENCH_SCALE_BIG=1 (0: none).
	bigN int
	// source builds (or returns the cached) source of n objects.
	source func(b *testing.B, n int) *scaleSource
}

// scaleSource serves n objects at version 1 to a fresh informer, and the
// next version of each (new resourceVersion, one more label) to its relist.
type scaleSource struct {
	// start starts lib's informer with hit as its only handler (called on
	// every notification); expire then switches the source to the next
	// versions and ends the open watch with a 410 Expired, so that the
	// informer relists all n objects. The function expire returns says when
	// the informer first asked the new source for anything.
	start func(b *testing.B, s scaleStart) (run *running, expire func() (relistStarted func() time.Time))
}

// scaleStart says how to start an informer on a scaleSource.
type scaleStart struct {
	lib string
	hit func() // the only handler, called on every notification
	// probed, if set, gets the probedLW the informer's source is wrapped
	// in, through which a liveProbe samples at the end of each list.
	probed func(*probedLW)
}

// source returns what the informer sees of lw.
func (s scaleStart) source(lw *scaleLW) cache.ListerWatcher {
	if s.probed == nil {
		return lw
	}
	p := newProbedLW(lw)
	s.probed(p)
	return p
}

var scaleKinds = []scaleKind{
	{name: "configmaps", source: configMapSource},
	{name: "pods", bigN: 1_000_000, source: podSource},
}

// BenchmarkScale (issue 16) is the scale curve: for 10k, 100k and 1M
// objects, one op is a fresh informer syncing all of them from an
// in-process source, then a 410 Expired on its watch and a relist of a new
// version of every object. Both libraries cache with their recommended
// options: listwatch's typed informer and client-go's SharedIndexInformer
// with controller-runtime's TransformStripManagedFields, started by
// startMemory (memory_test.go; start in subject_test.go) for pods and
// startConfigMaps for ConfigMaps.
//
//   - configmaps: small ConfigMaps (3 labels, 3 data keys, one managedFields
//     entry; ~0.6 KB as JSON) from a pre-decoded paged source that
//     deep-copies every page it serves, so each informer owns its objects
//     as if it had decoded them; neither library decodes. This measures the
//     informers themselves at up to 1M objects.
//   - pods: BenchmarkMemory's realistic pods (objects.MixedShape: 2-4
//     containers, 3-6 managedFields entries) served as protobuf by the httptest
//     apiserver (podServer); listwatch decodes with restsource and
//     BenchmarkMemory's recommended options (StripManagedFields, an
//     Interner, ShareResourceLists), client-go with its clientset. Each
//     library lists its default way (streaming where supported).
//
// Reported per op: sync-sec (from Run until the handler has seen every
// add and HasSynced), relist-sec (from the relist's first request until
// the handler has seen every update), relist-wait-sec (from the 410 to
// that first request: each library's backoff), live-B/obj
// (live heap after two forced collections, minus the live heap before the
// informer started, per object: the cache, its indexes and everything the
// informer keeps), and the peak heap of the sync and of the relist above
// that same base (so the relist's peak includes the cache it started
// with), in MB and per object.
//
// peak-sync-live-MB and peak-relist-live-MB are the peak live heap of one
// more, untimed sync and relist (scaleProbe, with liveProbe: exact live
// heap at fixed progress points, the pipeline paused), above the same
// base: what an informer needs, whatever the process's garbage.
//
// peak-sync-MB and peak-relist-MB are sampled by a goroutine every 5 ms
// (heapSampler): the largest /memory/classes/heap/objects:bytes from
// runtime/metrics (live objects plus garbage not yet collected, as
// runtime.MemStats.HeapAlloc), minus the live heap before the informer
// started. The source lives in the same process (base-MB: for pods the
// decoded corpus and its encoded pages and frames), which raises the
// collector's heap goal (GOGC=100: twice the whole live heap) so far that
// few or no collections run during an op: these figures are close to the
// cache plus everything the op allocated, a measure of garbage, not of
// what an informer in a process of its own would need. The peak live
// heap is that measure: such a process's heap stays under about twice it
// at GOGC=100, and under GOMEMLIMIT if it is above the peak live heap.
//
// Time, with -benchtime 1x on 2 cores: about 4 minutes a pass for 10k
// and 100k of both kinds, 3 minutes for 1M ConfigMaps (run the 1M points
// with -count 1: hack/bench.sh's scale-1m group). Memory: about 8 GiB for
// 100k pods, 6 GiB for 1M ConfigMaps.
func BenchmarkScale(b *testing.B) {
	big := os.Getenv("BENCH_SCALE_BIG") == "1"
	for _, kind := range scaleKinds {
		for _, n := range scaleSizes {
			b.Run(kind.name+"/n="+strconv.Itoa(n), func(b *testing.B) {
				if kind.bigN > 0 && n >= kind.bigN && !big {
					b.Skipf("%d %s need more memory than this machine has; BENCH_SCALE_BIG=1 runs it", n, kind.name)
				}
				src := kind.source(b, n)
				for _, lib := range libs {
					b.Run(lib, func(b *testing.B) { scaleRun(b, src, lib, n) })
				}
			})
		}
	}
}

// scaleRun runs b.N sync-then-relist rounds of lib on src and reports the
// means.
func scaleRun(b *testing.B, src *scaleSource, lib string, n int) {
	var syncSec, relistSec, waitSec, live, peakSync, peakRelist, source float64
	for range b.N {
		base := liveHeap()
		source += float64(base)
		cnt := newCounter(int64(n))
		hs := sampleHeap(5 * time.Millisecond)
		t0 := time.Now()
		run, expire := src.start(b, scaleStart{lib: lib, hit: func() { cnt.hit(nil) }})
		cnt.wait(b, 30*time.Minute)
		waitUntil(b, "synced", time.Minute, run.hasSynced)
		syncSec += time.Since(t0).Seconds()
		peakSync += float64(hs.finish() - base)
		live += float64(liveHeap() - base)

		cnt.expect(int64(n))
		hs = sampleHeap(5 * time.Millisecond)
		t0 = time.Now()
		started := expire()
		cnt.wait(b, 30*time.Minute)
		end := time.Now()
		relistSec += end.Sub(started()).Seconds()
		waitSec += started().Sub(t0).Seconds()
		peakRelist += float64(hs.finish() - base)
		run.stop()
	}
	b.StopTimer()
	liveSync, liveRelist := scaleProbe(b, src, lib, n)
	const mb = 1 << 20
	rounds, objs := float64(b.N), float64(b.N)*float64(n)
	b.ReportMetric(syncSec/rounds, "sync-sec")
	b.ReportMetric(relistSec/rounds, "relist-sec")
	b.ReportMetric(waitSec/rounds, "relist-wait-sec")
	b.ReportMetric(live/objs, "live-B/obj")
	b.ReportMetric(peakSync/rounds/mb, "peak-sync-MB")
	b.ReportMetric(peakRelist/rounds/mb, "peak-relist-MB")
	b.ReportMetric(source/rounds/mb, "base-MB")
	b.ReportMetric(float64(liveSync)/mb, "peak-sync-live-MB")
	b.ReportMetric(float64(liveRelist)/mb, "peak-relist-live-MB")
	b.ReportMetric(peakSync/objs, "peak-sync-B/obj")
	b.ReportMetric(peakRelist/objs, "peak-relist-B/obj")
}

// scaleProbe runs one more, untimed sync and relist of lib on src with
// liveProbe (util_test.go) and returns the peak live heap of each above
// the live heap before the informer started: exact at the probe's points
// (the end of each list, the first, 1/4, 1/2, 3/4 and last-but-one
// notification, the end), whatever else lives in the process.
func scaleProbe(b *testing.B, src *scaleSource, lib string, n int) (syncPeak, relistPeak int64) {
	var (
		plw   *probedLW
		cur   atomic.Pointer[liveProbe]
		probe = newLiveProbe(int64(n))
	)
	cnt := newCounter(int64(n))
	probe.start()
	base := probe.base
	cur.Store(probe)
	run, expire := src.start(b, scaleStart{lib: lib, probed: func(p *probedLW) { plw = p; p.probe.Store(probe) },
		hit: func() { cur.Load().hit(); cnt.hit(nil) }})
	defer run.stop()
	cnt.wait(b, 30*time.Minute)
	probe.sample()
	syncPeak = probe.peak

	probe = newLiveProbe(int64(n))
	cnt.expect(int64(n))
	probe.start()
	cur.Store(probe)
	plw.probe.Store(probe)
	expire()
	cnt.wait(b, 30*time.Minute)
	probe.sample()
	plw.probe.Store(nil)
	return syncPeak, probe.peak + probe.base - base
}

// heapSampler records the peak of the heap objects while an operation
// runs: a goroutine reads runtime/metrics every interval.
type heapSampler struct {
	stop chan struct{}
	done chan struct{}
	peak int64 // written by the goroutine, read after done
}

func sampleHeap(every time.Duration) *heapSampler {
	s := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		metrics.Read(sample)
		s.peak = max(s.peak, int64(sample[0].Value.Uint64()))
	}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			read()
			select {
			case <-t.C:
			case <-s.stop:
				read()
				return
			}
		}
	}()
	return s
}

// finish stops the sampler and returns the peak, in bytes.
func (s *heapSampler) finish() int64 {
	close(s.stop)
	<-s.done
	return s.peak
}

// scaleLW is the source an informer sees: the current one of two (the
// first version of the objects, then the next), switched by the
// benchmark before the 410.
type scaleLW struct {
	cur atomic.Pointer[cache.ListerWatcher]
	// first is the time of the first list or watch request since the last
	// switch (zero until then).
	first atomic.Pointer[time.Time]
}

func newScaleLW(lw cache.ListerWatcher) *scaleLW {
	s := &scaleLW{}
	s.cur.Store(&lw)
	return s
}

func (s *scaleLW) set(lw cache.ListerWatcher) {
	s.first.Store(nil)
	s.cur.Store(&lw)
}

func (s *scaleLW) get() cache.ListerWatcherWithContext {
	if s.first.Load() == nil {
		now := time.Now()
		s.first.CompareAndSwap(nil, &now)
	}
	return cache.ToListerWatcherWithContext(*s.cur.Load())
}

// relist switches to lw and returns when the informer first asked it for
// anything: the start of the relist, after the library's wait.
func (s *scaleLW) relist(lw cache.ListerWatcher) func() time.Time {
	s.set(lw)
	return func() time.Time {
		if t := s.first.Load(); t != nil {
			return *t
		}
		return time.Time{}
	}
}

func (s *scaleLW) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(*s.cur.Load())
}

func (s *scaleLW) List(opts metav1.ListOptions) (kruntime.Object, error) {
	return s.get().ListWithContext(context.Background(), opts)
}

func (s *scaleLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return s.get().WatchWithContext(context.Background(), opts)
}

func (s *scaleLW) ListWithContext(ctx context.Context, opts metav1.ListOptions) (kruntime.Object, error) {
	return s.get().ListWithContext(ctx, opts)
}

func (s *scaleLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return s.get().WatchWithContext(ctx, opts)
}

// scaleCache keeps the last source built: the curve runs kind by kind and
// size by size, so each is built once per pass and dropped for the next.
var scaleCache struct {
	mu  sync.Mutex
	key string
	src *scaleSource
}

func cachedSource(key string, build func() *scaleSource) *scaleSource {
	scaleCache.mu.Lock()
	defer scaleCache.mu.Unlock()
	if scaleCache.key != key {
		scaleCache.key, scaleCache.src = "", nil
		runtime.GC()
		scaleCache.key, scaleCache.src = key, build()
	}
	return scaleCache.src
}

// podSource serves n memoryPods from two podServers (version 1, then the
// next versions) as protobuf; listwatch decodes with restsource and
// BenchmarkMemory's recommended options, client-go with its clientset.
func podSource(b *testing.B, n int) *scaleSource {
	return cachedSource("pods/"+strconv.Itoa(n), func() *scaleSource {
		items, next := make([]corev1.Pod, n), make([]corev1.Pod, n)
		for i := range items {
			items[i] = *objects.RealisticPod(i, objects.MixedShape(i))
			next[i] = *nextVersion(&items[i], 1)
		}
		srvs := [2]*podServer{podServerFor(b, items), podServerFor(b, next)}
		srvs[0].setEvents([]watch.Event{expired})
		for _, srv := range srvs {
			srv.clientset(b, protobufType) // pre-encodes pages and frames: not measured
		}
		subjects := map[string]memorySubject{}
		for _, s := range memorySubjects {
			subjects[s.name] = s
		}
		return &scaleSource{start: func(b *testing.B, st scaleStart) (*running, func() func() time.Time) {
			s := subjects[st.lib]
			var lws [2]cache.ListerWatcher
			var in *restsource.Interner
			if s.intern {
				in = restsource.NewInterner(0) // one for both versions, as one informer has
			}
			for i, srv := range srvs {
				if !s.restsource {
					lws[i] = srv.listWatch(b, protobufType)
					continue
				}
				opts := s.opts
				opts.Client, opts.Resource, opts.ContentType = srv.clientset(b, protobufType).CoreV1().RESTClient(), "pods", protobufType
				opts.Interner = in
				lw, err := restsource.New[*corev1.Pod](opts)
				if err != nil {
					b.Fatal(err)
				}
				lws[i] = lw
			}
			lw := newScaleLW(lws[0])
			run := startMemory(b, s, st.source(lw), func(*corev1.Pod) { st.hit() })
			return run, func() func() time.Time {
				started := lw.relist(lws[1])
				srvs[0].live <- 0
				return started
			}
		}}
	})
}
