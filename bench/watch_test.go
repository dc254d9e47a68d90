package bench

import (
	"runtime"
	"testing"
	"time"
)

// BenchmarkWatchDecode (scenario 2): end-to-end watch with real decoding.
// An httptest apiserver streams pre-encoded watch frames (updates of 10k
// pods) in JSON or protobuf over loopback to a clientset speaking that
// content type; the informer (namespace and node indexes, one handler)
// decodes and processes them. One op is one event. client-go decodes with
// its REST client (the clientset's Watch); listwatch runs its own decoder,
// restsource (frames read on one goroutine, decoded on GOMAXPROCS workers,
// delivered in order), over the same REST client and server. The third
// subject, client-go+restsource, is client-go's informer on restsource: the
// decoder's share of the difference. The informer is synced once per
// sub-benchmark and reused across b.N rounds; both queues deliver in order.
//
// The burst rows (protobuf/…, json/…) send the events as fast as the
// subject takes them; the trickle rows (protobuf-trickle/…) send one event
// and wait until the handler has seen it before the next, as a quiet
// cluster's watch does: there a decoder's hand-offs between goroutines are
// not hidden by a backlog.
func BenchmarkWatchDecode(b *testing.B) {
	items := theCorpus().list[:fanoutPods]
	events, _ := fanoutEvents()
	srv := podServerFor(b, items)
	srv.setEvents(events)
	for _, ct := range []struct {
		name, contentType string
		trickle           bool
	}{{"protobuf", protobufType, false}, {"json", jsonType, false}, {"protobuf-trickle", protobufType, true}, {"json-trickle", jsonType, true}} {
		for _, subject := range []string{"listwatch", "client-go", "client-go+restsource"} {
			lib, fast := subject, subject != "client-go"
			if subject == "client-go+restsource" {
				lib = "client-go"
			}
			var (
				run  *running
				cnt  *counter
				next int
			)
			b.Run(ct.name+"/"+subject, func(b *testing.B) {
				if run == nil {
					cnt = newCounter(int64(len(items)))
					lw := srv.listWatch(b, ct.contentType)
					if fast {
						lw = srv.fastListWatch(b, ct.contentType)
					}
					run = start(b, lib, setup{lw: lw, inOrderQueue: true,
						handlers: []handler{{fn: cnt.hit}}})
					cnt.wait(b, 5*time.Minute)
				}
				cnt.expect(int64(b.N))
				// Start every subject from a collected heap, so that none
				// pays for the garbage of the corpus build or of the
				// subject before it.
				runtime.GC()
				b.ResetTimer()
				m := startMeter()
				for range b.N {
					if ct.trickle {
						cnt.expect(1)
					}
					srv.live <- next % len(events)
					next++
					if ct.trickle {
						cnt.wait(b, time.Minute)
					}
				}
				if !ct.trickle {
					cnt.wait(b, 5*time.Minute)
				}
				b.StopTimer()
				m.report(b, float64(b.N), "event")
			})
			if run != nil {
				run.stop()
			}
		}
	}
}
