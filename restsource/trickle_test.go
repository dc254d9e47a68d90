package restsource

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
)

// TestWatchTrickleAndBursts: a parallel watch whose stream alternates a
// trickle (one group of frames, then nothing until its events are out)
// and bursts (groups written back to back) delivers every event in the
// server's order, decoding the trickle on the reader (inline) and the
// bursts on the workers, whose decode times differ widely.
func TestWatchTrickleAndBursts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type group struct {
		frames  []byte
		n       int
		trickle bool
	}
	var groups []group
	total := 0
	for range 300 {
		g := group{trickle: rng.IntN(2) == 0}
		g.n = 1
		if !g.trickle {
			g.n = 1 + rng.IntN(40)
		}
		for range g.n {
			name := fmt.Sprintf("pod-%05d-%s", total, string(make([]byte, rng.IntN(3000))))
			var hdr [4]byte
			binary.BigEndian.PutUint32(hdr[:], uint32(len(name)))
			g.frames = append(append(g.frames, hdr[:]...), name...)
			total++
		}
		groups = append(groups, g)
	}
	// decode names the pod after the frame; a longer frame takes longer,
	// so that the workers finish out of order.
	decode := func(frame []byte) (watch.Event, error) {
		sum := 0
		for range len(frame) / 8 {
			for _, c := range frame[:64] {
				sum += int(c)
			}
		}
		_ = sum
		return watch.Event{Type: watch.Added, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: string(frame[:9])}}}, nil
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	w := &watcher{
		result: make(chan watch.Event), done: make(chan struct{}), ctx: ctx, cancel: cancel, body: pr,
		exited: make(chan struct{}), logger: klog.Background(), workers: 4,
		decoder: func(bool) eventDecoder { return decode },
	}
	br := bufio.NewReaderSize(pr, 64<<10)
	// run sniffs the encoding from the first byte; these frames are
	// protobuf-like (a length first), as parallel expects.
	go func() {
		defer close(w.exited)
		defer close(w.result)
		defer w.shutdown()
		w.parallel(&protoFrames{r: br}, decode)
	}()
	acks := make(chan struct{})
	go func() {
		for _, g := range groups {
			if _, err := pw.Write(g.frames); err != nil {
				return
			}
			if g.trickle {
				<-acks // nothing more until its event is out
			}
		}
		pw.Close()
	}()
	got := 0
	for _, g := range groups {
		for range g.n {
			ev, ok := <-w.ResultChan()
			if !ok {
				t.Fatalf("the watch ended after %d of %d events", got, total)
			}
			if want := fmt.Sprintf("pod-%05d", got); ev.Object.(*corev1.Pod).Name != want {
				t.Fatalf("event %d is %s, want %s", got, ev.Object.(*corev1.Pod).Name, want)
			}
			got++
		}
		if g.trickle {
			acks <- struct{}{}
		}
	}
	if _, ok := <-w.ResultChan(); ok {
		t.Fatal("an event after the last one")
	}
	w.Stop()
	if w.inlined == 0 || w.inlined >= total {
		t.Fatalf("%d of %d frames decoded inline, want some but not all", w.inlined, total)
	}
	t.Logf("%d of %d frames decoded inline", w.inlined, total)
}
