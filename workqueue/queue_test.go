package workqueue

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func newTestQueue[T comparable](t *testing.T, opts Options[T]) *Typed[T] {
	t.Helper()
	q := New(t.Context(), opts)
	t.Cleanup(q.ShutDown)
	return q
}

// TestAtMostOneWorkerPerItem hammers a few keys from many producers and
// workers and checks that no item is ever processed by two workers at once,
// and that every add is followed by a processing of its item.
func TestAtMostOneWorkerPerItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		keys := []string{"a", "b", "c", "d", "e"}
		var mu sync.Mutex
		active := map[string]bool{}
		var workers, producers sync.WaitGroup
		for w := range 8 {
			workers.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), 7))
				for {
					item, down := q.Get()
					if down {
						return
					}
					mu.Lock()
					if active[item] {
						t.Errorf("%q handed to two workers at once", item)
					}
					active[item] = true
					mu.Unlock()
					time.Sleep(time.Duration(rng.IntN(5)) * time.Millisecond)
					mu.Lock()
					active[item] = false
					mu.Unlock()
					q.Done(item)
				}
			})
		}
		for p := range 4 {
			producers.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(p), 9))
				for range 500 {
					q.Add(keys[rng.IntN(len(keys))])
					time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
				}
			})
		}
		producers.Wait()
		q.ShutDownWithDrain()
		workers.Wait()
	})
}

// TestMatchesNaiveReference drives the queue and a naive model with the
// same random single-threaded sequence of Add, Get and Done, comparing
// every handed-out item and Len.
func TestMatchesNaiveReference(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	ref := &naiveQueue{}
	rng := rand.New(rand.NewPCG(3, 4))
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	var inFlight []string
	for step := range 20000 {
		switch op := rng.IntN(3); {
		case op == 0:
			k := keys[rng.IntN(len(keys))]
			q.Add(k)
			ref.add(k)
		case op == 1 && ref.len() > 0:
			got, _ := q.Get()
			want := ref.get()
			if got != want {
				t.Fatalf("step %d: Get = %q, reference %q", step, got, want)
			}
			inFlight = append(inFlight, got)
		case op == 2 && len(inFlight) > 0:
			i := rng.IntN(len(inFlight))
			k := inFlight[i]
			inFlight = slices.Delete(inFlight, i, i+1)
			q.Done(k)
			ref.done(k)
		}
		if q.Len() != ref.len() {
			t.Fatalf("step %d: Len = %d, reference %d", step, q.Len(), ref.len())
		}
	}
}

// naiveQueue is the obviously correct model: a slice for order, flags for
// dirty and processing.
type naiveQueue struct {
	order      []string
	dirty      map[string]bool
	processing map[string]bool
}

func (n *naiveQueue) add(k string) {
	if n.dirty == nil {
		n.dirty, n.processing = map[string]bool{}, map[string]bool{}
	}
	if n.dirty[k] {
		return
	}
	n.dirty[k] = true
	if !n.processing[k] {
		n.order = append(n.order, k)
	}
}

func (n *naiveQueue) get() string {
	k := n.order[0]
	n.order = n.order[1:]
	n.dirty[k] = false
	n.processing[k] = true
	return k
}

func (n *naiveQueue) done(k string) {
	n.processing[k] = false
	if n.dirty[k] {
		n.order = append(n.order, k)
	}
}

func (n *naiveQueue) len() int { return len(n.order) }

func TestContextCancelShutsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		q := New(ctx, Options[string]{})
		got := make(chan bool)
		go func() {
			_, down := q.Get()
			got <- down
		}()
		synctest.Wait()
		cancel()
		if !<-got {
			t.Fatal("Get did not report shutdown after ctx was cancelled")
		}
		if !q.ShuttingDown() {
			t.Fatal("ShuttingDown = false")
		}
	})
}

func TestEntriesAreRecycled(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	for range 3 {
		for _, k := range []string{"a", "b", "c"} {
			q.Add(k)
		}
		for range 3 {
			k, _ := q.Get()
			q.Done(k)
		}
	}
	if q.index.n != 0 || q.slab.n != 3 || len(q.free) != 3 {
		t.Fatalf("index=%d entries=%d free=%d, want 0 3 3", q.index.n, q.slab.n, len(q.free))
	}
}

func TestRingAndIndexShrinkAfterBurst(t *testing.T) {
	q := newTestQueue(t, Options[int]{})
	for i := range 100_000 {
		q.Add(i)
	}
	for range 100_000 {
		k, _ := q.Get()
		q.Done(k)
	}
	for i := range 300_000 { // steady low traffic after the burst
		q.Add(i)
		k, _ := q.Get()
		q.Done(k)
	}
	if n := q.fifo.Cap(); n > 1024 {
		t.Fatalf("ring buffer still holds %d slots after the burst", n)
	}
	if n := len(q.index.slots); n > minIndexSlots {
		t.Fatalf("index still holds %d slots after the burst", n)
	}
}

func TestNilContextAndZeroOptions(t *testing.T) {
	//lint:ignore SA1012 a nil context is exactly what is being tested
	q := New[string](nil, Options[string]{AgingInterval: -time.Second}) //nolint:staticcheck
	defer q.ShutDown()
	q.Add("a")
	if item, _ := q.Get(); item != "a" {
		t.Fatalf("Get = %q, want a", item)
	}
	q.Done("a")
	if q.aging != int64(DefaultAgingInterval) {
		t.Fatalf("aging = %v, want the default", time.Duration(q.aging))
	}
}

// TestManyInFlightBeyondTheDoneShortcut holds more items than the inflight
// list tracks and finishes them in scrambled order, with misuse in between.
func TestManyInFlightBeyondTheDoneShortcut(t *testing.T) {
	q := newTestQueue(t, Options[int]{})
	const n = 3 * maxInflight
	for i := range n {
		q.Add(i)
	}
	var got []int
	for range n {
		item, _ := q.Get()
		got = append(got, item)
	}
	q.Add(5) // in flight: becomes dirty
	rng := rand.New(rand.NewPCG(1, 1))
	rng.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
	for _, item := range got {
		q.Done(item)
		q.Done(item) // misuse: ignored
	}
	if q.processing != 0 || len(q.inflight) != 0 || q.Len() != 1 {
		t.Fatalf("processing=%d inflight=%d Len=%d; want 0 0 1", q.processing, len(q.inflight), q.Len())
	}
	if item, _ := q.Get(); item != 5 {
		t.Fatalf("Get = %d, want 5", item)
	}
	q.Done(5)
	if q.index.n != 0 {
		t.Fatalf("%d entries left in the index", q.index.n)
	}
}

// TestBufferedAddsKeepCallOrder mixes buffered plain Adds with adds that
// take the lock directly; the queue must see them in call order.
func TestBufferedAddsKeepCallOrder(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.Add("a")
	q.AddAfter("b", 0)
	q.Add("c")
	mustAdd(t, q, "d", AddOptions{})
	q.Add("a") // collapses with the buffered "a"
	expectOrder(t, getAll(q), "a", "b", "c", "d")
}

// TestAddWakesBlockedGet: an Add from another goroutine reaches a Get that
// is already waiting, without any other call applying the buffer.
func TestAddWakesBlockedGet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		got := make(chan string)
		for range 3 {
			go func() {
				item, _ := q.Get()
				got <- item
			}()
		}
		synctest.Wait()
		for _, k := range []string{"x", "y", "z"} {
			q.Add(k)
			if item := <-got; item != k {
				t.Fatalf("Get = %q, want %q", item, k)
			}
			q.Done(k)
		}
	})
}

// TestBufferedAddsAreBounded: a producer without any consumer never holds
// more than intakeFlush buffered adds, so duplicates collapse.
func TestBufferedAddsAreBounded(t *testing.T) {
	q := newTestQueue(t, Options[int]{})
	for i := range 100_000 {
		q.Add(i % 10)
	}
	q.in.mu.Lock()
	buffered := len(q.in.buf)
	q.in.mu.Unlock()
	if buffered >= intakeFlush || q.Len() != 10 {
		t.Fatalf("buffered %d, Len %d; want < %d and 10", buffered, q.Len(), intakeFlush)
	}
}
