package informer

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/store"
)

// feedLW serves a prebuilt list and then a watch fed by the benchmark, so
// both informers see identical, pre-decoded input. Both get it through
// objects.NoWatchList, so both use List then Watch.
type feedLW struct {
	list *corev1.PodList
	ch   chan watch.Event
	once sync.Once
	// lists and watches count calls: a benchmark that relists measures
	// the wrong thing.
	lists, watches atomic.Int64
}

func (f *feedLW) List(metav1.ListOptions) (runtime.Object, error) {
	f.lists.Add(1)
	return f.list, nil
}
func (f *feedLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	f.watches.Add(1)
	var w watch.Interface
	f.once.Do(func() { w = watch.NewProxyWatcher(f.ch) })
	if w == nil {
		return watch.NewEmptyWatch(), nil // later watches: idle
	}
	return w, nil
}

func benchPod(i, gen int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: fmt.Sprintf("ns-%d", i%50), Name: fmt.Sprintf("pod-%d", i),
			ResourceVersion: fmt.Sprint(10 + gen), UID: "uid",
			Labels: map[string]string{"app": fmt.Sprint("app-", i%100), "tier": "web", "gen": fmt.Sprint(gen)},
		},
		Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%200), Containers: []corev1.Container{{Name: "c", Image: "img"}}},
	}
}

func byNode(p *corev1.Pod) ([]string, error) { return []string{p.Spec.NodeName}, nil }

func nodeOf(p *corev1.Pod) (string, bool) { return p.Spec.NodeName, true }

// steadyInput is n pods in the list plus two later versions of each, and a
// schedule of events cycling add/update/delete over them.
type steadyInput struct {
	list   *corev1.PodList
	events []watch.Event
}

func newSteadyInput(n int) steadyInput {
	in := steadyInput{list: &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}}}
	for i := range n {
		in.list.Items = append(in.list.Items, *benchPod(i, 0))
	}
	// Per pod: update, update, delete, add (so the set stays stable).
	for i := range n {
		in.events = append(in.events,
			watch.Event{Type: watch.Modified, Object: benchPod(i, 1)},
			watch.Event{Type: watch.Modified, Object: benchPod(i, 2)},
			watch.Event{Type: watch.Deleted, Object: benchPod(i, 2)},
			watch.Event{Type: watch.Added, Object: benchPod(i, 3)},
		)
	}
	return in
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSteadyStateEvents: pre-decoded watch events through the whole
// informer (queue, store with 2 indexes, one handler), per event.
func BenchmarkSteadyStateEvents(b *testing.B) {
	in := newSteadyInput(10000)
	run := func(b *testing.B, start func(ctx context.Context, lw *feedLW, count *atomic.Int64, done chan struct{}, target int64) func() bool) {
		lw := &feedLW{list: in.list, ch: make(chan watch.Event, 1024)}
		ctx, cancel := context.WithCancel(b.Context())
		defer cancel()
		var count atomic.Int64
		done := make(chan struct{})
		target := int64(len(in.list.Items) + b.N)
		synced := start(ctx, lw, &count, done, target)
		for !synced() {
			time.Sleep(time.Millisecond)
		}
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := cpuTime()
		for i := range b.N {
			lw.ch <- in.events[i%len(in.events)]
		}
		<-done
		b.StopTimer()
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/event")
		if l, w := lw.lists.Load(), lw.watches.Load(); l != 1 || w != 1 {
			b.Logf("%d lists and %d watches: the informer relisted", l, w)
		}
	}
	b.Run("listwatch", func(b *testing.B) {
		run(b, func(ctx context.Context, lw *feedLW, count *atomic.Int64, done chan struct{}, target int64) func() bool {
			inf, err := New(Options[*corev1.Pod]{Source: reflector.FromListerWatcher(objects.NoWatchList(lw)), OrderedQueue: true,
				ValueIndexers: store.ValueIndexers[*corev1.Pod]{"node": nodeOf}})
			if err != nil {
				b.Fatal(err)
			}
			tick := func() {
				if count.Add(1) == target {
					close(done)
				}
			}
			inf.AddHandler(HandlerFuncs[*corev1.Pod]{
				AddFunc:    func(*corev1.Pod, bool) { tick() },
				UpdateFunc: func(_, _ *corev1.Pod) { tick() },
				DeleteFunc: func(*corev1.Pod, bool) { tick() },
			}, HandlerOptions{Delivery: ptr.To(InOrder)})
			go inf.Run(ctx)
			return inf.HasSynced
		})
	})
	b.Run("client-go", func(b *testing.B) {
		run(b, func(ctx context.Context, lw *feedLW, count *atomic.Int64, done chan struct{}, target int64) func() bool {
			inf := cache.NewSharedIndexInformer(objects.NoWatchList(lw), &corev1.Pod{}, 0, cache.Indexers{
				cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
				"node":               func(o any) ([]string, error) { return byNode(o.(*corev1.Pod)) },
			})
			tick := func() {
				if count.Add(1) == target {
					close(done)
				}
			}
			inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    func(any) { tick() },
				UpdateFunc: func(_, _ any) { tick() },
				DeleteFunc: func(any) { tick() },
			})
			go inf.RunWithContext(ctx)
			return inf.HasSynced
		})
	})
}
