package workqueue

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/listwatch/listwatch/workqueue"
	"github.com/listwatch/listwatch/workqueue/workqueuetest"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"

	cgworkqueue "k8s.io/client-go/util/workqueue"
)

// TestScenarioMetrics runs one metrics scenario against both queues, built
// through the config constructors with the same fake provider.
func TestScenarioMetrics(t *testing.T) {
	ctors := map[string]func(p cgworkqueue.MetricsProvider) cgQueue{
		"listwatch": func(p cgworkqueue.MetricsProvider) cgQueue {
			return NewTypedRateLimitingQueueWithConfig[string](nil,
				cgworkqueue.TypedRateLimitingQueueConfig[string]{Name: "q", MetricsProvider: p})
		},
		"client-go": func(p cgworkqueue.MetricsProvider) cgQueue {
			return cgworkqueue.NewTypedRateLimitingQueueWithConfig(cgworkqueue.DefaultTypedControllerRateLimiter[string](),
				cgworkqueue.TypedRateLimitingQueueConfig[string]{Name: "q", MetricsProvider: p})
		},
	}
	for name, newQ := range ctors {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &workqueuetest.Provider{}
				q := newQ(p)
				defer q.ShutDown()
				q.Add("a")
				q.Add("b")
				q.Add("a")
				p.Adds.ExpectValue(t, "adds", 2)
				p.Depth.ExpectValue(t, "depth", 2)
				time.Sleep(time.Second)
				a, _ := q.Get()
				q.Add("a") // while processing: counted, queued at Done
				p.Adds.ExpectValue(t, "adds", 3)
				time.Sleep(2 * time.Second)
				q.Done(a)
				p.Latency.ExpectObs(t, "latency", 1)
				p.Work.ExpectObs(t, "work duration", 2)
				b, _ := q.Get()
				time.Sleep(1200 * time.Millisecond)
				synctest.Wait()
				p.Longest.ExpectValue(t, "longest running", 1)
				q.Done(b)
				q.AddRateLimited("c")
				q.AddAfter("d", time.Second)
				p.Retries.ExpectValue(t, "retries", 2)
			})
		})
	}
}

func TestConfigConstructorsHonourClock(t *testing.T) {
	ctors := map[string]func(c *clocktesting.FakeClock) cgworkqueue.TypedDelayingInterface[string]{
		"delaying": func(c *clocktesting.FakeClock) cgworkqueue.TypedDelayingInterface[string] {
			return NewTypedDelayingQueueWithConfig(cgworkqueue.TypedDelayingQueueConfig[string]{Clock: c})
		},
		"ratelimiting": func(c *clocktesting.FakeClock) cgworkqueue.TypedDelayingInterface[string] {
			return NewTypedRateLimitingQueueWithConfig[string](nil, cgworkqueue.TypedRateLimitingQueueConfig[string]{Clock: c})
		},
		"plain": func(c *clocktesting.FakeClock) cgworkqueue.TypedDelayingInterface[string] {
			return NewTypedWithConfig(cgworkqueue.TypedQueueConfig[string]{Clock: c})
		},
	}
	for name, newQ := range ctors {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fc := clocktesting.NewFakeClock(time.Unix(1000, 0))
				q := newQ(fc)
				defer q.ShutDown()
				q.AddAfter("a", time.Second)
				synctest.Wait() // the delay goroutine has armed its fake timer
				fc.Step(999 * time.Millisecond)
				synctest.Wait()
				if q.Len() != 0 {
					t.Fatal("item ready before its fake due time")
				}
				fc.Step(time.Millisecond)
				synctest.Wait()
				if q.Len() != 1 {
					t.Fatalf("Len = %d after the fake due time, want 1", q.Len())
				}
			})
		})
	}
}

func TestRateLimitingWithCustomDelayingQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := cgworkqueue.NewTypedDelayingQueue[string]()
		q := NewTypedRateLimitingQueueWithConfig(
			workqueue.NewItemExponentialRateLimiter[string](time.Second, time.Minute),
			cgworkqueue.TypedRateLimitingQueueConfig[string]{DelayingQueue: inner})
		defer q.ShutDown()
		q.AddRateLimited("a")
		if q.NumRequeues("a") != 1 || inner.Len() != 0 {
			t.Fatalf("NumRequeues = %d, inner Len = %d; want 1, 0", q.NumRequeues("a"), inner.Len())
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if inner.Len() != 1 {
			t.Fatalf("inner Len = %d after the delay, want 1", inner.Len())
		}
		q.Forget("a")
		if q.NumRequeues("a") != 0 {
			t.Fatal("Forget did not reach the limiter")
		}
	})
}

// TypedDelayingQueueConfig.Queue (a whole foreign queue) is ignored; custom
// storage through TypedQueueConfig.Queue is honoured (custom_test.go).
func TestUnsupportedConfigFieldsAreIgnored(t *testing.T) {
	logger := klog.Background()
	q2 := NewTypedDelayingQueueWithConfig(cgworkqueue.TypedDelayingQueueConfig[string]{
		Logger: &logger, Queue: cgworkqueue.NewTyped[string](),
	})
	defer q2.ShutDown()
	q2.Add("b")
	q2.Add("a")
	if item, _ := q2.Get(); item != "b" {
		t.Fatalf("Get = %q, want b", item)
	}
	q3 := NewTypedDelayingQueue[string]()
	defer q3.ShutDown()
	q3.AddAfter("x", -1)
	if q3.Len() != 1 {
		t.Fatal("NewTypedDelayingQueue lost an item")
	}
}

type cgQueue = cgworkqueue.TypedRateLimitingInterface[string]
