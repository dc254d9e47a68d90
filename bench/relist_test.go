package bench

import (
	"net/http"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

var expired = watch.Event{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure,
	Code: http.StatusGone, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 1 (2)"}}

// BenchmarkRelist (scenario 4): an informer synced with 100k pre-decoded
// pods (paged lists) gets a 410 Expired on its watch and relists; the new
// list has a new version of every pod, so the round ends when the handler
// has seen 100k updates. ns/op includes each library's backoff before the
// relist, cpu-ns/obj does not. gone-to-watch-ms is the time from the 410
// being sent to the next watch being asked for (the whole relist as the
// server sees it: backoff, list, and what each library does before it
// watches again); list-to-watch-ms the part from the list's first page.
//
// peak-live-MB is the peak live heap of one more, untimed relist, above
// the live heap before it: liveProbe pauses the pipeline (the sampling
// goroutine and list requests), collects and reads the live heap when the
// last page arrives, at the first, 1/4, 1/2, 3/4 and last-but-one update
// notification, and at the end. A relist that holds the whole new list
// (here each item's copy, ~1.3 KB, next to the cached old version) plus a
// queue entry per object shows it when the last page arrives or at the
// first notification. listwatch-atomic is listwatch with
// informer.Options.AtomicRelists: the sink gathers the pages and the
// list is applied in one transaction. BENCH_DROPIN=1 adds the client-go
// drop-in (listwatch-dropin); BENCH_RELIST_UNPAGED=1 makes the source
// answer every list in one page, whatever its limit (issue 36's relist
// row: the unpaged list a client-go ListWatch returns in one piece).
//
// With a list in one response there is no list request for the probe to
// hold, so the probe also holds each library's transform (setup.onQueue)
// while it samples: what the informer takes in stops there, for client-go
// in the middle of its Replace, for listwatch between the pages it hands
// the list over in.
func BenchmarkRelist(b *testing.B) {
	c := syncCorpus()
	lists := [2][]corev1.Pod{c[0], c[1]}
	variants := []struct {
		name, lib string
		atomic    bool
	}{{"listwatch", "listwatch", false}, {"listwatch-atomic", "listwatch", true}, {"client-go", "client-go", false}}
	if os.Getenv("BENCH_DROPIN") != "" {
		variants = slices.Insert(variants, 2, struct {
			name, lib string
			atomic    bool
		}{"listwatch-dropin", "listwatch-dropin", false})
	}
	unpaged := os.Getenv("BENCH_RELIST_UNPAGED") != ""
	for _, v := range variants {
		lib := v.lib
		b.Run(v.name, func(b *testing.B) {
			feed := newFeed(lists[0], "1", true)
			feed.unpaged = unpaged
			lw := newProbedLW(feed)
			cnt := newCounter(int64(steadyPods))
			probe := newLiveProbe(steadyPods)
			var probing atomic.Bool
			run := start(b, lib, setup{lw: lw, paged: true, atomicRelists: v.atomic, handlers: []handler{{fn: func(p *corev1.Pod) {
				if probing.Load() {
					probe.hit()
				}
				cnt.hit(p)
			}}}, onQueue: func(*corev1.Pod) {
				if probing.Load() {
					probe.g.wait()
				}
			}})
			defer run.stop()
			cnt.wait(b, 5*time.Minute)
			var cpu, allocs, bytes, gone, listed float64
			b.ResetTimer()
			round := 0
			relist := func() {
				feed.setItems(lists[(round+1)%2], "2")
				round++
				cnt.expect(steadyPods)
			}
			for range b.N {
				b.StopTimer()
				relist()
				liveHeap()
				b.StartTimer()
				m := startMeter()
				watches := feed.watches.Load()
				sent := time.Now().UnixNano()
				feed.ch <- expired
				cnt.wait(b, 5*time.Minute)
				m.stop()
				waitUntil(b, "the watch after the relist", time.Minute, func() bool { return feed.watches.Load() > watches })
				gone += float64(feed.watchedAt.Load() - sent)
				listed += float64(feed.watchedAt.Load() - feed.listedAt.Load())
				cpu += float64(m.cpuDelta.Nanoseconds())
				allocs += float64(m.allocs)
				bytes += float64(m.bytes)
			}
			b.StopTimer()
			// The peak: one more relist, probed.
			relist()
			probe.start()
			probing.Store(true)
			lw.probe.Store(probe)
			feed.ch <- expired
			cnt.wait(b, 5*time.Minute)
			probe.sample()
			lw.probe.Store(nil)
			probing.Store(false)

			objs := float64(b.N) * steadyPods
			b.ReportMetric(cpu/objs, "cpu-ns/obj")
			b.ReportMetric(allocs/objs, "allocs/obj")
			b.ReportMetric(bytes/objs, "B/obj")
			b.ReportMetric(probe.peakMB(), "peak-live-MB")
			b.ReportMetric(gone/float64(b.N)/1e6, "gone-to-watch-ms")
			b.ReportMetric(listed/float64(b.N)/1e6, "list-to-watch-ms")
		})
	}
}
