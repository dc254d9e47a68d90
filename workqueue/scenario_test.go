package workqueue

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	cgworkqueue "k8s.io/client-go/util/workqueue"
)

// The scenarios below are written once against client-go's interface and run
// against both queues (and, for rate limits, both libraries' limiters), each
// inside a synctest bubble so delays pass in virtual time.

type cgQueue = cgworkqueue.TypedRateLimitingInterface[string]

type queueCtor func(limiter cgworkqueue.TypedRateLimiter[string]) cgQueue

var queueImpls = []struct {
	name string
	new  queueCtor
}{
	{"listwatch", func(l cgworkqueue.TypedRateLimiter[string]) cgQueue { return rateLimited(l) }},
	{"client-go", func(l cgworkqueue.TypedRateLimiter[string]) cgQueue { return cgworkqueue.NewTypedRateLimitingQueue(l) }},
}

// rateLimited is the queue clientgo/util/workqueue's
// NewTypedRateLimitingQueue builds: it lives until ShutDown, as client-go's
// does, which takes no context.
func rateLimited(l RateLimiter[string]) *Typed[string] {
	return New(context.Background(), Options[string]{RateLimiter: l}) //lint:allow-background the queue ends with ShutDown, as client-go's
}

// runBoth runs scenario against each queue implementation in a bubble. The
// queue is shut down when the scenario returns.
func runBoth(t *testing.T, scenario func(t *testing.T, q cgQueue)) {
	t.Helper()
	for _, impl := range queueImpls {
		t.Run(impl.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := impl.new(NewItemExponentialRateLimiter[string](time.Second, time.Minute))
				defer q.ShutDown()
				scenario(t, q)
			})
		})
	}
}

// takeReady hands out and finishes every ready item, returning their order.
func takeReady(q cgQueue) []string {
	var got []string
	for n := q.Len(); n > 0; n-- {
		item, _ := q.Get()
		got = append(got, item)
		q.Done(item)
	}
	return got
}

func expectOrder(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("order = %q, want %q", got, want)
	}
}

func TestScenarioFIFO(t *testing.T) {
	runBoth(t, func(t *testing.T, q cgQueue) {
		for _, k := range []string{"d", "a", "c", "b"} {
			q.Add(k)
		}
		expectOrder(t, takeReady(q), "d", "a", "c", "b")
	})
}

func TestScenarioWaitingDuplicatesCollapse(t *testing.T) {
	runBoth(t, func(t *testing.T, q cgQueue) {
		for _, k := range []string{"a", "b", "a", "c", "b", "a"} {
			q.Add(k)
		}
		if q.Len() != 3 {
			t.Fatalf("Len = %d, want 3", q.Len())
		}
		expectOrder(t, takeReady(q), "a", "b", "c")
	})
}

func TestScenarioAddWhileProcessingRequeuesOnceAfterDone(t *testing.T) {
	runBoth(t, func(t *testing.T, q cgQueue) {
		q.Add("a")
		item, _ := q.Get()
		q.Add("a")
		q.Add("a")
		if q.Len() != 0 {
			t.Fatalf("Len while processing = %d, want 0", q.Len())
		}
		got := make(chan string)
		go func() {
			item, _ := q.Get()
			got <- item
		}()
		synctest.Wait()
		select {
		case <-got:
			t.Fatal("second worker got the item while it was processed")
		default:
		}
		q.Done(item)
		if second := <-got; second != "a" {
			t.Fatalf("got %q, want a", second)
		}
		if q.Len() != 0 {
			t.Fatalf("Len = %d, want 0: the item must come back exactly once", q.Len())
		}
		q.Done("a")
	})
}

func TestScenarioAddAfterKeepsEarliest(t *testing.T) {
	runBoth(t, func(t *testing.T, q cgQueue) {
		q.AddAfter("a", 2*time.Second)
		q.AddAfter("a", time.Second)
		q.AddAfter("b", time.Second)
		q.AddAfter("b", 3*time.Second)
		time.Sleep(time.Second)
		synctest.Wait()
		expectOrder(t, takeReady(q), "a", "b")
		time.Sleep(5 * time.Second)
		synctest.Wait()
		expectOrder(t, takeReady(q))
	})
}

func TestScenarioAddAfterOrdersByDueTime(t *testing.T) {
	runBoth(t, func(t *testing.T, q cgQueue) {
		q.AddAfter("c", 3*time.Second)
		q.AddAfter("a", time.Second)
		q.AddAfter("b", 2*time.Second)
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		expectOrder(t, takeReady(q), "a")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		expectOrder(t, takeReady(q), "b", "c")
	})
}

func TestScenarioNonPositiveDelayAddsNow(t *testing.T) {
	runBoth(t, func(t *testing.T, q cgQueue) {
		q.AddAfter("a", -time.Second)
		q.AddAfter("b", 0)
		if q.Len() != 2 {
			t.Fatalf("Len = %d, want 2", q.Len())
		}
		expectOrder(t, takeReady(q), "a", "b")
	})
}

func TestScenarioDelayIndependentOfQueued(t *testing.T) {
	runBoth(t, func(t *testing.T, q cgQueue) {
		q.Add("a")
		q.AddAfter("a", time.Second)
		expectOrder(t, takeReady(q), "a")
		time.Sleep(time.Second)
		synctest.Wait()
		expectOrder(t, takeReady(q), "a")
	})
}

func TestScenarioShutDownHandsOutQueuedThenStops(t *testing.T) {
	runBoth(t, func(t *testing.T, q cgQueue) {
		q.Add("a")
		q.Add("b")
		q.AddAfter("late", time.Second)
		q.ShutDown()
		q.Add("c")
		if !q.ShuttingDown() {
			t.Fatal("ShuttingDown = false")
		}
		time.Sleep(2 * time.Second)
		for _, want := range []string{"a", "b"} {
			if item, down := q.Get(); item != want || down {
				t.Fatalf("Get = %q, %v; want %q, false", item, down, want)
			}
			q.Done(want)
		}
		if item, down := q.Get(); !down || item != "" {
			t.Fatalf("Get = %q, %v; want shutdown", item, down)
		}
	})
}

func TestScenarioShutDownWakesBlockedGet(t *testing.T) {
	runBoth(t, func(t *testing.T, q cgQueue) {
		done := make(chan bool)
		go func() {
			_, down := q.Get()
			done <- down
		}()
		synctest.Wait()
		q.ShutDown()
		if !<-done {
			t.Fatal("Get returned without shutdown")
		}
	})
}

func TestScenarioShutDownWithDrainWaitsForDone(t *testing.T) {
	runBoth(t, func(t *testing.T, q cgQueue) {
		q.Add("a")
		item, _ := q.Get()
		drained := make(chan struct{})
		go func() {
			q.ShutDownWithDrain()
			close(drained)
		}()
		synctest.Wait()
		select {
		case <-drained:
			t.Fatal("ShutDownWithDrain returned while an item was in flight")
		default:
		}
		q.Done(item)
		<-drained
	})
}

func TestScenarioRateLimited(t *testing.T) {
	limiters := map[string]func() cgworkqueue.TypedRateLimiter[string]{
		"listwatch-limiter": func() cgworkqueue.TypedRateLimiter[string] {
			return NewItemExponentialRateLimiter[string](time.Second, 4*time.Second)
		},
		"client-go-limiter": func() cgworkqueue.TypedRateLimiter[string] {
			return cgworkqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, 4*time.Second)
		},
	}
	for lname, newLimiter := range limiters {
		for _, impl := range queueImpls {
			t.Run(impl.name+"/"+lname, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { rateLimitedScenario(t, impl.new(newLimiter())) })
			})
		}
	}
}

func rateLimitedScenario(t *testing.T, q cgQueue) {
	defer q.ShutDown()
	start := time.Now()
	var waits []time.Duration
	for range 4 {
		q.AddRateLimited("a")
		item, _ := q.Get()
		waits = append(waits, time.Since(start))
		start = time.Now()
		q.Done(item)
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second}; !slices.Equal(waits, want) {
		t.Fatalf("waits = %v, want %v", waits, want)
	}
	if n := q.NumRequeues("a"); n != 4 {
		t.Fatalf("NumRequeues = %d, want 4", n)
	}
	q.Forget("a")
	if n := q.NumRequeues("a"); n != 0 {
		t.Fatalf("NumRequeues after Forget = %d, want 0", n)
	}
}
