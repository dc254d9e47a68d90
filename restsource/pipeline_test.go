package restsource_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestWatchOrderWithManyWorkers: objects of very different sizes decode
// in very different times; events still arrive in the server's order.
func TestWatchOrderWithManyWorkers(t *testing.T) {
	const n = 1000
	for _, ct := range contentTypes {
		e := newEnc(ct)
		srv := newServer(t)
		var body []byte
		for i := range n {
			p := testPod(i)
			if i%7 == 0 { // a much larger pod now and then
				p.Annotations["big"] = strings.Repeat("x", 8000)
				for j := range 50 {
					p.Labels[fmt.Sprint("l", j)] = "v"
				}
			}
			body = append(body, e.frame(t, watch.Modified, p)...)
		}
		srv.watch[ct] = body
		for _, workers := range []int{2, 8, 32} {
			w, err := srv.source(t, ct, workers).WatchWithContext(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			evs := drain(t, w)
			w.Stop()
			if len(evs) != n {
				t.Fatalf("%s, %d workers: %d events, want %d", ct, workers, len(evs), n)
			}
			for i, ev := range evs {
				if name := ev.Object.(*corev1.Pod).Name; name != testPod(i).Name {
					t.Fatalf("%s, %d workers: event %d is %s", ct, workers, i, name)
				}
			}
		}
	}
}

// TestWatchStop: Stop mid-stream, whether the consumer is reading or not,
// and the cancellation of the context, close the result channel and end
// every goroutine (TestMain checks with goleak) without hanging.
func TestWatchStop(t *testing.T) {
	for _, ct := range contentTypes {
		e := newEnc(ct)
		srv := newServer(t)
		srv.block = true // the stream stays open after the canned events
		var body []byte
		for i := range 200 {
			body = append(body, e.frame(t, watch.Added, testPod(i))...)
		}
		srv.watch[ct] = body
		for _, workers := range []int{1, 4} {
			src := srv.source(t, ct, workers)
			name := fmt.Sprintf("%s/%d", ct, workers)

			// reading, then Stop from another goroutine while reading
			w, err := src.WatchWithContext(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for range 10 {
				<-w.ResultChan()
			}
			go w.Stop()
			got := 10 + len(drain(t, w))
			if got > 200 {
				t.Errorf("%s: %d events", name, got)
			}
			w.Stop() // twice is fine

			// not reading: the emitter is blocked on the result channel
			w, err = src.WatchWithContext(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			<-w.ResultChan()
			w.Stop()
			drain(t, w)

			// all 200 delivered, then the idle open stream is cut by the context
			ctx, cancel := context.WithCancel(t.Context())
			w, err = src.WatchWithContext(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 200 {
				if ev := <-w.ResultChan(); ev.Object.(*corev1.Pod).Name != testPod(i).Name {
					t.Fatalf("%s: event %d is %v", name, i, describe([]watch.Event{ev}))
				}
			}
			cancel()
			if evs := drain(t, w); len(evs) != 0 {
				t.Errorf("%s: events after the cancellation: %v", name, describe(evs))
			}
			w.Stop()
		}
	}
}
