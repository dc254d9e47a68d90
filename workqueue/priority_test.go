package workqueue

import (
	"math"
	"testing"
	"testing/synctest"
	"time"
)

// getAll hands out and finishes every ready item of q, in order.
func getAll[T comparable](q *Typed[T]) []T {
	var got []T
	for n := q.Len(); n > 0; n-- {
		item, _ := q.Get()
		got = append(got, item)
		q.Done(item)
	}
	return got
}

func mustAdd(t *testing.T, q *Typed[string], item string, opts AddOptions) {
	t.Helper()
	if err := q.AddWithOptions(item, opts); err != nil {
		t.Fatalf("AddWithOptions(%q): %v", item, err)
	}
}

func TestPriorityOrderAndFIFOWithinPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		q.Add("zero-1")
		mustAdd(t, q, "high-1", AddOptions{Priority: 5})
		mustAdd(t, q, "low", AddOptions{Priority: -1})
		mustAdd(t, q, "mid", AddOptions{Priority: 1})
		q.Add("zero-2")
		mustAdd(t, q, "high-2", AddOptions{Priority: 5})
		expectOrder(t, getAll(q), "high-1", "high-2", "mid", "zero-1", "zero-2", "low")
	})
}

func TestPriorityRaisedNeverLowered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		q.Add("a")
		q.Add("b")
		q.Add("c")
		mustAdd(t, q, "c", AddOptions{Priority: 3}) // moves from the FIFO to the heap
		mustAdd(t, q, "c", AddOptions{Priority: 1}) // lower: ignored
		q.Add("c")                                  // priority zero: ignored
		mustAdd(t, q, "b", AddOptions{Priority: 2})
		if q.Len() != 3 {
			t.Fatalf("Len = %d, want 3", q.Len())
		}
		expectOrder(t, getAll(q), "c", "b", "a")
	})
}

func TestPriorityOfAddWhileProcessingIsKeptForRequeue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		q.Add("a")
		item, _ := q.Get()
		q.Add("b")
		mustAdd(t, q, "a", AddOptions{Priority: 1})
		mustAdd(t, q, "a", AddOptions{Priority: 4})
		q.Add("a")
		q.Done(item)
		expectOrder(t, getAll(q), "a", "b")
	})
}

func TestDelayedAddKeepsPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		mustAdd(t, q, "late-high", AddOptions{Priority: 9, After: time.Second})
		q.Add("now")
		time.Sleep(time.Second)
		synctest.Wait()
		expectOrder(t, getAll(q), "late-high", "now")
	})
}

// TestAgingOneLevelPerInterval: an item that waited k intervals ties with
// an item k levels higher; the older one wins the tie.
func TestAgingOneLevelPerInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTestQueue(t, Options[string]{AgingInterval: time.Second})
		q.Add("old")
		time.Sleep(3 * time.Second)
		mustAdd(t, q, "new+3", AddOptions{Priority: 3})
		mustAdd(t, q, "new+2", AddOptions{Priority: 2})
		mustAdd(t, q, "new+4", AddOptions{Priority: 4})
		expectOrder(t, getAll(q), "new+4", "old", "new+3", "new+2")
	})
}

// starvationRun feeds one worker (10ms per item) a steady stream of new
// priority-10 items, one every 5ms — twice what it can process — after one
// priority-0 item; the worker starts 20ms later. It returns when and after how many others the low item
// was processed, or ok == false if it still waits after horizon.
func starvationRun(t *testing.T, aging, horizon time.Duration) (at time.Duration, before int, ok bool) {
	q := New(t.Context(), Options[int]{AgingInterval: aging})
	defer q.ShutDown()
	start := time.Now()
	if err := q.AddWithOptions(-1, AddOptions{Priority: 0}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				_ = q.AddWithOptions(i, AddOptions{Priority: 10})
			}
		}
	}()
	defer close(stop)
	time.Sleep(20 * time.Millisecond) // let high-priority items queue up first
	for time.Since(start) < horizon {
		item, _ := q.Get()
		time.Sleep(10 * time.Millisecond)
		q.Done(item)
		if item == -1 {
			return time.Since(start), before, true
		}
		before++
	}
	return 0, before, false
}

// TestNoStarvationUnderSteadyHighPriorityStream is the regression test for
// controller-runtime#3496: with aging, a priority-0 item waits behind at
// most the priority-10 items added within 10 aging intervals of it.
func TestNoStarvationUnderSteadyHighPriorityStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const aging = 100 * time.Millisecond
		at, before, ok := starvationRun(t, aging, time.Minute)
		if !ok {
			t.Fatal("priority-0 item starved")
		}
		// Only items added before 10×aging = 1s (one per 5ms) outrank it.
		if before > 200 || at > 2100*time.Millisecond {
			t.Fatalf("low item processed after %d others at %v; want ≤ 200 others, ≤ 2.1s", before, at)
		}
	})
}

// TestStarvationHarnessDetectsStrictPriority shows the harness above would
// catch starvation: with aging effectively off the low item never runs.
func TestStarvationHarnessDetectsStrictPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		if _, before, ok := starvationRun(t, 1000*time.Hour, 10*time.Second); ok {
			t.Fatalf("low item ran after %d others; the harness cannot see starvation", before)
		}
	})
}

func TestAgingKeySaturates(t *testing.T) {
	cases := []struct {
		enq   int64
		prio  int32
		aging int64
		want  int64
	}{
		{100, 0, 5, 100},
		{100, 2, 5, 90},
		{100, -2, 5, 110},
		{0, maxPriority, math.MaxInt64, math.MinInt64},
		{0, -maxPriority, math.MaxInt64, math.MaxInt64},
		{math.MinInt64 + 5, 1, 10, math.MinInt64},
		{math.MaxInt64 - 5, -1, 10, math.MaxInt64},
	}
	for _, c := range cases {
		if got := agingKey(c.enq, c.prio, c.aging); got != c.want {
			t.Errorf("agingKey(%d, %d, %d) = %d, want %d", c.enq, c.prio, c.aging, got, c.want)
		}
	}
	if clampPriority(math.MaxInt) != maxPriority || clampPriority(math.MinInt) != -maxPriority {
		t.Error("clampPriority does not clamp")
	}
}
