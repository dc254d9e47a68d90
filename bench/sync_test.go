package bench

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// syncSource is one way of serving the initial list.
type syncSource struct {
	name  string
	paged bool // both informers list in pages (no streaming list)
	// newLW returns a fresh source over items.
	newLW func(b *testing.B, items []corev1.Pod) cache.ListerWatcher
}

var syncSources = []syncSource{
	{name: "predecoded-paged", paged: true, newLW: func(_ *testing.B, items []corev1.Pod) cache.ListerWatcher {
		return newFeed(items, "1", true)
	}},
	{name: "predecoded-stream", newLW: func(_ *testing.B, items []corev1.Pod) cache.ListerWatcher {
		return newFeed(items, "1", false)
	}},
	{name: "protobuf-paged", paged: true, newLW: func(b *testing.B, items []corev1.Pod) cache.ListerWatcher {
		return podServerFor(b, items).listWatch(b, protobufType)
	}},
	{name: "protobuf-stream", newLW: func(b *testing.B, items []corev1.Pod) cache.ListerWatcher {
		return podServerFor(b, items).listWatch(b, protobufType)
	}},
}

// BenchmarkInitialSync (scenario 3): one op is a fresh informer (namespace
// and node indexes, one handler) syncing 100k pods, from Run until the
// handler has been handed every initial add. Lists are pre-decoded (a
// ListerWatcher over ready objects) or served as protobuf by an httptest
// apiserver to real REST clients; paged (500 per page) or streaming
// (sendInitialEvents). Reported per object: CPU, allocations and bytes;
// retained-B/obj is the live heap the synced informer holds beyond the
// source's objects (for pre-decoded sources: the store, its indexes and
// the informer's bookkeeping; decoded sources add the objects themselves);
// peak-MB is the highest heap (live and garbage) seen during the sync
// above the live heap before it.
func BenchmarkInitialSync(b *testing.B) {
	items := theCorpus().list[:steadyPods]
	for _, src := range syncSources {
		for _, lib := range libs {
			b.Run(src.name+"/"+lib, func(b *testing.B) {
				b.StopTimer()
				lw := src.newLW(b, items)
				var retained, peak int64
				var m *meter
				var cpu, allocs, bytes float64
				for range b.N {
					base := liveHeap()
					cnt := newCounter(int64(len(items)))
					b.StartTimer()
					m = startMeter()
					ps := samplePeak()
					run := start(b, lib, setup{lw: lw, paged: src.paged, handlers: []handler{{fn: cnt.hit}}})
					cnt.wait(b, 10*time.Minute)
					m.stop()
					peak += ps.finish() - base
					b.StopTimer()
					retained += liveHeap() - base
					run.stop()
					cpu += float64(m.cpuDelta.Nanoseconds())
					allocs += float64(m.allocs)
					bytes += float64(m.bytes)
				}
				n := float64(b.N)
				objs := n * float64(len(items))
				b.ReportMetric(cpu/objs, "cpu-ns/obj")
				b.ReportMetric(allocs/objs, "allocs/obj")
				b.ReportMetric(bytes/objs, "B/obj")
				b.ReportMetric(float64(retained)/objs, "retained-B/obj")
				b.ReportMetric(float64(peak)/n/(1<<20), "peak-MB")
			})
		}
	}
}
