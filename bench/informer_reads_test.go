package bench

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/store"
)

// Reads-during-writes at informer level: hotPods pods, every fifth of
// them in the namespace "hot" (hotPods/5 = 10k), while readers loop
// ByIndex("namespace", "hot") and a watch delivers MODIFIED events.
const (
	hotPods = 50_000
	hotNS   = "hot"
)

// hotCorpus is the cached list and one MODIFIED event per pod (a new
// version, as nextVersion makes it).
var hotCorpus = sync.OnceValues(func() ([]corev1.Pod, []watch.Event) {
	c := theCorpus()
	items := make([]corev1.Pod, hotPods)
	events := make([]watch.Event, hotPods)
	for i := range items {
		items[i] = c.list[i]
		if i%5 == 0 {
			items[i].Namespace = hotNS
		}
		events[i] = watch.Event{Type: watch.Modified, Object: nextVersion(&items[i], 1)}
	}
	return items, events
})

// readSubject is one informer with concurrent cache readers, for any of
// the subjects: listwatch's typed informer (read with ByIndex or
// ByIndexSeq, with its default semantics or client-go's), its client-go
// drop-in, and client-go's own.
type readSubject struct {
	feed *feedLW
	// read lists the hot namespace through the namespace index and
	// returns how many objects it got.
	read func() int
	// seen is signalled when a handler gets the object last.
	seen chan struct{}
	last atomic.Pointer[corev1.Pod]
	stop func()
	// rvs stamps the events fed to this subject's informer.
	rvs rvStamper
}

// appLabelIndexFunc indexes pods by their "app" label, as a client-go
// user writes an index function (BENCH_READ_LABEL_INDEX, issue 36's shape).
func appLabelIndexFunc(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("not a pod: %T", obj)
	}
	return []string{p.Labels["app"]}, nil
}

func (s *readSubject) hit(p *corev1.Pod) {
	if p == s.last.Load() {
		s.seen <- struct{}{}
	}
}

func startReadSubject(b *testing.B, subject string) *readSubject {
	items, _ := hotCorpus()
	s := &readSubject{feed: newFeed(items, "1", true), seen: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background()) //lint:allow-background outlives one run of the benchmark function; stopped by s.stop
	var wg sync.WaitGroup
	var synced func() bool
	switch subject {
	case "listwatch", "listwatch-seq", "listwatch-seq-ordered":
		opts := informer.Options[*corev1.Pod]{Source: reflector.FromListerWatcher(s.feed)}
		if subject == "listwatch-seq-ordered" {
			opts.OrderedQueue, opts.Delivery = true, informer.InOrder
		}
		inf, err := informer.New(opts)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := inf.AddHandler(informer.HandlerFuncs[*corev1.Pod]{
			UpdateFunc: func(_, p *corev1.Pod) { s.hit(p) },
		}, informer.HandlerOptions{}); err != nil {
			b.Fatal(err)
		}
		rd := inf.Reader()
		s.read = func() int {
			l, _ := rd.ByIndex(store.NamespaceIndex, hotNS)
			return len(l)
		}
		if subject != "listwatch" {
			s.read = func() int {
				seq, _ := rd.ByIndexSeq(store.NamespaceIndex, hotNS)
				n := 0
				for range seq {
					n++
				}
				return n
			}
		}
		synced = inf.HasSynced
		wg.Go(func() { _ = inf.Run(ctx) })
	case "listwatch-dropin", "client-go":
		newInformer := cache.NewSharedIndexInformer
		if subject == "listwatch-dropin" {
			newInformer = lwcache.NewSharedIndexInformer
		}
		indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
		if os.Getenv("BENCH_READ_LABEL_INDEX") != "" {
			indexers["app"] = appLabelIndexFunc
		}
		inf := newInformer(s.feed, &corev1.Pod{}, 0, indexers)
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(_, o any) { s.hit(o.(*corev1.Pod)) },
		}); err != nil {
			b.Fatal(err)
		}
		idx := inf.GetIndexer()
		s.read = func() int {
			l, _ := idx.ByIndex(cache.NamespaceIndex, hotNS)
			return len(l)
		}
		synced = inf.HasSynced
		wg.Go(func() { inf.RunWithContext(ctx) })
	default:
		b.Fatalf("unknown subject %q", subject)
	}
	s.stop = func() { cancel(); wg.Wait() }
	deadline := time.Now().Add(5 * time.Minute)
	for !synced() {
		if time.Now().After(deadline) {
			b.Fatal("informer did not sync")
		}
		time.Sleep(time.Millisecond)
	}
	return s
}

// BenchmarkInformerReadsDuringWrites (issue 15): a whole informer, as a
// user runs it, with 50k cached pods of which 10k are in one namespace;
// 1, 10 or 40 goroutines loop GetIndexer().ByIndex("namespace", "hot")
// (the typed Reader().ByIndex for listwatch's typed informer) while the
// watch delivers b.N MODIFIED events. One op is one event, counted from
// the first send until a handler has seen the last one (so every write
// is in the cache); writes/s and reads/s are over that span. Subjects:
// listwatch (typed), listwatch-dropin (lwcache.NewSharedIndexInformer)
// and client-go (cache.NewSharedIndexInformer), in the same run, plus
// listwatch-seq: the typed informer read with Reader().ByIndexSeq, the
// allocation-free iterator, which a caller that only ranges over the
// objects can use instead of ByIndex; and listwatch-seq-ordered: that
// with client-go's semantics (Options.OrderedQueue and InOrder delivery)
// instead of the typed defaults' coalescing. The informer is synced once
// per sub-benchmark and reused across rounds.
// BENCH_SPAN_CPUPROFILE=file profiles the measured span only.
//
// Diagnostics, off by default (docs/benchmarks/reads-during-writes.md,
// "One reader"):
// BENCH_READERS lists reader counts instead of 1,10,40 (0 measures the
// pipeline alone); BENCH_READ_PACE makes each reader sleep that long
// after every read, so that both libraries read at about the same rate;
// BENCH_SUBJECTS lists some of the subjects; BENCH_READ_LABEL_INDEX=1
// gives the drop-in and client-go a client-go-style label index too.
func BenchmarkInformerReadsDuringWrites(b *testing.B) {
	_, events := hotCorpus()
	want := hotPods / 5
	pace := envDuration(b, "BENCH_READ_PACE")
	for _, readers := range envInts(b, "BENCH_READERS", []int{1, 10, 40}) {
		for _, subject := range envList("BENCH_SUBJECTS", []string{"listwatch", "listwatch-seq", "listwatch-seq-ordered", "listwatch-dropin", "client-go"}) {
			var s *readSubject
			next := 0
			b.Run(fmt.Sprintf("readers=%d/%s", readers, subject), func(b *testing.B) {
				if s == nil {
					s = startReadSubject(b, subject)
				}
				var reads atomic.Int64
				stop := make(chan struct{})
				var wg sync.WaitGroup
				for range readers {
					wg.Go(func() {
						for {
							select {
							case <-stop:
								return
							default:
							}
							if got := s.read(); got != want {
								panic(fmt.Sprintf("listed %d pods, want %d", got, want))
							}
							reads.Add(1)
							if pace > 0 {
								time.Sleep(pace)
							}
						}
					})
				}
				time.Sleep(10 * time.Millisecond) // let the readers get going
				s.rvs.prepare(b.N)
				b.ResetTimer()
				r0 := reads.Load()
				m := startMeter()
				stopProfile := spanProfile(b)
				for i := range b.N {
					ev := s.rvs.stamp(events[next%len(events)])
					next++
					if i == b.N-1 {
						// A fresh object the handler can recognise.
						p := *ev.Object.(*corev1.Pod)
						s.last.Store(&p)
						ev.Object = &p
					}
					s.feed.ch <- ev
				}
				select {
				case <-s.seen:
				case <-time.After(5 * time.Minute):
					b.Fatal("the last event never reached the handler")
				}
				m.stop()
				stopProfile()
				r1 := reads.Load()
				b.StopTimer()
				close(stop)
				wg.Wait()
				b.ReportMetric(float64(b.N)/m.elapsed.Seconds(), "writes/s")
				b.ReportMetric(float64(r1-r0)/m.elapsed.Seconds(), "reads/s")
			})
			if s != nil {
				s.stop()
			}
		}
	}
}
