package bench

import (
	"net/http"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// relistItems is the first steadyPods pods at their next version, as
// values (a decoded list's shape), so that a relist changes every pod.
var relistItems = sync.OnceValue(func() []corev1.Pod {
	g := theCorpus().gens[0]
	out := make([]corev1.Pod, len(g))
	for i, p := range g {
		out[i] = *p
	}
	return out
})

var expired = watch.Event{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure,
	Code: http.StatusGone, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 1 (2)"}}

// BenchmarkRelist (scenario 4): an informer synced with 100k pre-decoded
// pods gets a 410 Expired on its watch and relists; the new list has a
// new version of every pod, so the round ends when the handler has seen
// 100k updates. peak-MB is the highest heap seen during the relist above
// the live heap before it (a relist that builds a second full copy of the
// cache shows here); ns/op includes each library's backoff before the
// relist, cpu-ns/obj does not.
func BenchmarkRelist(b *testing.B) {
	lists := [2][]corev1.Pod{theCorpus().list[:steadyPods], relistItems()}
	for _, lib := range libs {
		b.Run(lib, func(b *testing.B) {
			feed := newFeed(lists[0], "1", true)
			cnt := newCounter(int64(steadyPods))
			run := start(b, lib, setup{lw: feed, paged: true, handlers: []handler{{fn: cnt.hit}}})
			defer run.stop()
			cnt.wait(b, 5*time.Minute)
			var peak int64
			var cpu, allocs, bytes float64
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				feed.setItems(lists[(i+1)%2], "2")
				cnt.expect(steadyPods)
				base := liveHeap()
				b.StartTimer()
				ps := samplePeak()
				m := startMeter()
				feed.ch <- expired
				cnt.wait(b, 5*time.Minute)
				m.stop()
				peak += ps.finish() - base
				cpu += float64(m.cpuDelta.Nanoseconds())
				allocs += float64(m.allocs)
				bytes += float64(m.bytes)
			}
			b.StopTimer()
			objs := float64(b.N) * steadyPods
			b.ReportMetric(cpu/objs, "cpu-ns/obj")
			b.ReportMetric(allocs/objs, "allocs/obj")
			b.ReportMetric(bytes/objs, "B/obj")
			b.ReportMetric(float64(peak)/float64(b.N)/(1<<20), "peak-MB")
		})
	}
}
