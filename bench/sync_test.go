package bench

import (
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/internal/testing/objects"
)

// syncCorpus is the input of scenarios 3 and 4: steadyPods pods as a list
// (values, as a decoded PodList holds them) and, for the relist, the next
// version of each (new resourceVersion and one changed label, as values).
// The pods are the shared corpus's (objects.PlainPod), but built on their own: these
// benchmarks then run on a ~0.5 GB base heap instead of the shared
// corpus's ~1.6 GB, so that each forced collection of liveProbe takes about
// a third of a second rather than a second.
var syncCorpus = sync.OnceValue(func() [2][]corev1.Pod {
	var c [2][]corev1.Pod
	c[0], c[1] = make([]corev1.Pod, steadyPods), make([]corev1.Pod, steadyPods)
	for i := range c[0] {
		c[0][i] = *objects.RealisticPod(i, objects.PlainPod)
		c[1][i] = c[0][i]
		p := &c[1][i]
		p.ResourceVersion = strconv.Itoa(1_000_000 + atoi(p.ResourceVersion))
		p.Labels = make(map[string]string, len(c[0][i].Labels)+1)
		for k, v := range c[0][i].Labels {
			p.Labels[k] = v
		}
		p.Labels["gen"] = "1"
	}
	return c
})

// syncSource is one way of serving the initial list.
type syncSource struct {
	name  string
	paged bool // both informers list in pages (no streaming list)
	// newLW returns a fresh source over items for lib. Decoded sources give
	// each library its own decoder, as in BenchmarkWatchDecode: listwatch
	// restsource, client-go its clientset.
	newLW func(b *testing.B, items []corev1.Pod, lib string) cache.ListerWatcher
}

var syncSources = []syncSource{
	{name: "predecoded-paged", paged: true, newLW: func(_ *testing.B, items []corev1.Pod, _ string) cache.ListerWatcher {
		return newFeed(items, "1", true)
	}},
	{name: "predecoded-stream", newLW: func(_ *testing.B, items []corev1.Pod, _ string) cache.ListerWatcher {
		return newFeed(items, "1", false)
	}},
	{name: "protobuf-paged", paged: true, newLW: protobufLW},
	{name: "protobuf-stream", newLW: protobufLW},
}

func protobufLW(b *testing.B, items []corev1.Pod, lib string) cache.ListerWatcher {
	if lib == "listwatch" {
		return podServerFor(b, items).fastListWatch(b, protobufType)
	}
	return podServerFor(b, items).listWatch(b, protobufType)
}

// BenchmarkInitialSync (scenario 3): one op is a fresh informer (namespace
// and node indexes, one handler) syncing 100k pods, from Run until the
// handler has been handed every initial add. Lists are pre-decoded (a
// ListerWatcher over ready objects) or served as protobuf by an httptest
// apiserver (listwatch decodes with restsource, client-go with its
// clientset); paged (500 per page) or streaming
// (sendInitialEvents). Reported per object: CPU, allocations and bytes;
// retained-B/obj is the live heap the synced informer holds beyond the
// source's objects (for pre-decoded sources: the store, its indexes and
// the informer's bookkeeping; paged pre-decoded sources add the copy of
// each item both reflectors make, meta.ExtractListWithAlloc; decoded
// sources add the objects themselves).
//
// peak-live-MB is the peak live heap of one more, untimed sync, above the
// live heap before it: the largest sample liveProbe takes with the
// pipeline paused and collected, at the end of the list (the last page
// arriving, or the streaming list's closing bookmark), at the first, 1/4,
// 1/2, 3/4 and last-but-one notification, and once synced. It includes
// what the synced informer keeps; transient-MB is the peak minus the
// synced state: what the sync held on the way beyond what it keeps.
func BenchmarkInitialSync(b *testing.B) {
	items := syncCorpus()[0]
	for _, src := range syncSources {
		for _, lib := range libsWithDropin() {
			b.Run(src.name+"/"+lib, func(b *testing.B) {
				b.StopTimer()
				lw := newProbedLW(src.newLW(b, items, lib))
				var retained int64
				var cpu, allocs, bytes float64
				for range b.N {
					base := liveHeap()
					cnt := newCounter(int64(len(items)))
					b.StartTimer()
					m := startMeter()
					stopProfile := spanProfile(b)
					run := start(b, lib, setup{lw: lw, paged: src.paged, handlers: []handler{{fn: cnt.hit}}})
					cnt.wait(b, 10*time.Minute)
					stopProfile()
					m.stop()
					b.StopTimer()
					retained += liveHeap() - base
					run.stop()
					cpu += float64(m.cpuDelta.Nanoseconds())
					allocs += float64(m.allocs)
					bytes += float64(m.bytes)
				}
				// The peak: one more sync, probed.
				probe := newLiveProbe(int64(len(items)))
				cnt := newCounter(int64(len(items)))
				probe.start()
				lw.probe.Store(probe)
				run := start(b, lib, setup{lw: lw, paged: src.paged, handlers: []handler{{fn: func(p *corev1.Pod) {
					probe.hit()
					cnt.hit(p)
				}}}})
				cnt.wait(b, 10*time.Minute)
				probe.sample()
				lw.probe.Store(nil)
				run.stop()

				n := float64(b.N)
				objs := n * float64(len(items))
				b.ReportMetric(cpu/objs, "cpu-ns/obj")
				b.ReportMetric(allocs/objs, "allocs/obj")
				b.ReportMetric(bytes/objs, "B/obj")
				b.ReportMetric(float64(retained)/objs, "retained-B/obj")
				b.ReportMetric(probe.peakMB(), "peak-live-MB")
				b.ReportMetric(probe.transientMB(), "transient-MB")
			})
		}
	}
}
