package fake

import (
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	fcache "k8s.io/client-go/tools/cache/testing"
)

const benchWatchers = 8

// drainAll reads every watch until it closes.
func drainAll(ws []watch.Interface) *sync.WaitGroup {
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() {
			for range w.ResultChan() {
			}
		})
	}
	return &wg
}

// BenchmarkWriteFanout measures one write delivered to benchWatchers open
// watches: this package's Server against client-go's FakeControllerSource.
func BenchmarkWriteFanout(b *testing.B) {
	b.Run("listwatch", func(b *testing.B) {
		srv, err := NewServer(Options{WatchBufferSize: 1 << 20, Resources: []Resource{Pods()}})
		if err != nil {
			b.Fatal(err)
		}
		lw := srv.ListerWatcher(LWOptions{Resource: podsGVR})
		ws := make([]watch.Interface, benchWatchers)
		for i := range ws {
			ws[i], _ = lw.WatchWithContext(b.Context(), metav1.ListOptions{ResourceVersion: "0"})
		}
		wg := drainAll(ws)
		ctx := b.Context()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := srv.Create(ctx, newPod("ns", fmt.Sprint("p", i), nil)); err != nil {
				b.Fatal(err)
			}
		}
		for _, w := range ws {
			w.Stop()
		}
		wg.Wait()
	})
	b.Run("client-go", func(b *testing.B) {
		src := fcache.NewFakeControllerSource()
		ws := make([]watch.Interface, benchWatchers)
		for i := range ws {
			ws[i], _ = src.Watch(metav1.ListOptions{ResourceVersion: "0"})
		}
		wg := drainAll(ws)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			src.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("p", i)}})
		}
		src.Shutdown()
		wg.Wait()
	})
}

// BenchmarkList1000 measures a full list of 1000 pods.
func BenchmarkList1000(b *testing.B) {
	pods := make([]*corev1.Pod, 1000)
	for i := range pods {
		pods[i] = newPod(fmt.Sprint("ns", i%10), fmt.Sprint("p", i), map[string]string{"i": fmt.Sprint(i)})
	}
	b.Run("listwatch", func(b *testing.B) {
		srv, _ := NewServer(Options{Resources: []Resource{Pods()}})
		for _, p := range pods {
			if _, err := srv.Create(b.Context(), p); err != nil {
				b.Fatal(err)
			}
		}
		lw := srv.ListerWatcher(LWOptions{Resource: podsGVR})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := lw.List(metav1.ListOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("client-go", func(b *testing.B) {
		src := fcache.NewFakeControllerSource()
		for _, p := range pods {
			src.Add(p.DeepCopy())
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := src.List(metav1.ListOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		src.Shutdown()
	})
}
