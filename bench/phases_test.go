package bench

import (
	"runtime"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// phaseEvents are the three phases of BenchmarkPhases, steadyPods events
// each: every pod ADDED, then MODIFIED once, then DELETED. The DELETED
// events carry copies, so that stamping their resource versions touches
// nothing a cache holds.
var phaseEvents = sync.OnceValue(func() [3][]watch.Event {
	c := theCorpus()
	deleted := make([]corev1.Pod, steadyPods)
	var ph [3][]watch.Event
	for i := range steadyPods {
		deleted[i] = *c.gens[1][i]
		ph[0] = append(ph[0], watch.Event{Type: watch.Added, Object: c.gens[0][i]})
		ph[1] = append(ph[1], watch.Event{Type: watch.Modified, Object: c.gens[1][i]})
		ph[2] = append(ph[2], watch.Event{Type: watch.Deleted, Object: &deleted[i]})
	}
	return ph
})

// phaseNames name BenchmarkPhases' metrics.
var phaseNames = [3]string{"added", "modified", "deleted"}

// BenchmarkPhases (issue 36) is the client-go user's shape of a watch:
// an informer that starts with one cached pod gets steadyPods pre-decoded
// pods ADDED, then each MODIFIED once, then each DELETED, as one watch
// whose resource versions rise, through the whole informer (queue in
// order, store with the namespace and node indexes, one counting
// handler). One op is the three phases; each phase's CPU per event is a
// metric of its own (added-cpu-ns/event, ...), with the collections that
// fall in it as they fall (GCs per op). The subjects are those of
// BenchmarkSteadyState: listwatch's typed informer, client-go's code with
// the import prefix changed (listwatch-dropin: client-go's IndexFuncs and
// handler), and client-go. Run it with -benchtime 1x for 100k events per
// phase, more for the phases repeated. BENCH_SPAN_CPUPROFILE=file
// profiles each phase into file-<subject>-<phase>.
func BenchmarkPhases(b *testing.B) {
	c := theCorpus()
	ph := phaseEvents()
	for _, lib := range []string{"listwatch", "listwatch-dropin", "client-go"} {
		b.Run(lib, func(b *testing.B) {
			runtime.GC()
			feed := newFeed(c.list[steadyPods:steadyPods+1], "1", true)
			cnt := newCounter(1)
			run := start(b, lib, setup{lw: feed, inOrderQueue: true, handlers: []handler{{fn: cnt.hit}}})
			defer run.stop()
			cnt.wait(b, 5*time.Minute)
			var rvs rvStamper
			var cpu [3]time.Duration
			var allocs [3]uint64
			gcs := uint32(0)
			b.ResetTimer()
			for range b.N {
				for p, events := range ph {
					b.StopTimer()
					rvs.prepare(len(events))
					cnt.expect(int64(len(events)))
					b.StartTimer()
					m := startMeter()
					stopProfile := spanProfile(b, "-"+lib+"-"+phaseNames[p])
					for _, ev := range events {
						feed.ch <- rvs.stamp(ev)
					}
					cnt.wait(b, 5*time.Minute)
					stopProfile()
					m.stop()
					cpu[p] += m.cpuDelta
					allocs[p] += m.allocs
					gcs += m.gcs
				}
			}
			b.StopTimer()
			events := float64(b.N * steadyPods)
			for p, name := range phaseNames {
				b.ReportMetric(float64(cpu[p].Nanoseconds())/events, name+"-cpu-ns/event")
				b.ReportMetric(float64(allocs[p])/events, name+"-allocs/event")
			}
			b.ReportMetric(float64(gcs)/float64(b.N), "GCs/op")
		})
	}
}
