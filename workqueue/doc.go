// Package workqueue is a typed work queue for controllers: a drop-in for
// client-go's util/workqueue (same interfaces, same semantics, measured side
// by side) that is faster, allocates nothing per item, and adds priorities
// that cannot starve.
//
// # Usage
//
// Create a queue with New (or a drop-in constructor such as
// NewTypedRateLimitingQueue), start workers that loop on Get and Done, and
// add keys from event handlers:
//
//	q := workqueue.New(ctx, workqueue.Options[string]{Name: "pods"})
//	defer q.ShutDown()
//	for {
//		key, shutdown := q.Get()
//		if shutdown {
//			return
//		}
//		if err := reconcile(key); err != nil {
//			q.AddRateLimited(key) // retry later, with backoff
//		} else {
//			q.Forget(key) // reset the backoff
//		}
//		q.Done(key)
//	}
//
// The guarantees, each covered by a test:
//
//   - Deduplication: adding an item that is waiting to be processed does
//     nothing; it is handed out once.
//   - One worker per item: Get never hands out an item that is being
//     processed. An item added while it is processed is queued once more
//     when Done is called.
//   - Order: distinct items of equal priority come out first-in first-out.
//   - Delays: AddAfter(item, d) adds item once d has passed; repeated calls
//     keep the earliest due time. Each costs O(log n) in pending delays.
//   - Rate limits: AddRateLimited delays by the RateLimiter's When;
//     Forget and NumRequeues reach the limiter. Limiters: per-item
//     exponential, fast-slow, token bucket, max-of, with-max-wait and
//     DefaultControllerRateLimiter. RateLimiter has client-go's method set,
//     so limiters of either library work with queues of either library.
//   - Metrics: depth, adds, queue latency, work duration, unfinished work,
//     longest-running processor and retries, through client-go's
//     MetricsProvider interface (see the promprovider subpackage). With
//     metrics off the hot path reads no clock and allocates nothing.
//
// # Priorities
//
// AddWithOptions(item, AddOptions{Priority: p, After: d}) queues with a
// priority (higher first; zero is what Add uses). To rule out starvation
// (controller-runtime#3496: a steady stream of high-priority items starves
// low ones for ever), waiting ages an item linearly: every AgingInterval
// waited is worth one priority level. Precisely, a ready item enqueued at
// time t with priority p has the key t − p×AgingInterval, and Get hands
// out the smallest key (ties first-in first-out). Consequently an item
// (t, p) is handed out before every item added after t + (pmax − p)×
// AgingInterval, where pmax is the highest priority in use: however many
// items keep arriving, it waits only behind those added before that moment. Re-adding a
// queued item keeps the higher priority. Items queued before the first
// non-zero priority is ever used count as enqueued when the queue was
// created (this keeps Add free of clock reads); that only favours them.
//
// # Custom storage
//
// NewTypedWithConfig honours the Queue field of client-go's
// TypedQueueConfig, a [k8s.io/client-go/util/workqueue.Queue] that stores
// the ready items. The queue keeps its own deduplication, dirty and
// processing bookkeeping, delays and metrics, and calls the custom Queue as
// client-go does: Push when an item becomes ready (added, or Done for an
// item added again while processing), Touch when an item already waiting is
// added again, Pop in Get, Len in Len and Get. Its methods are called with
// the queue's lock held: never concurrently, and they must not block or
// call back into the queue. It decides the order, so AddOptions.Priority
// has no effect on it. It must hand back every pushed item exactly once; an
// item it pops that is not waiting is skipped (logged at V(2)).
//
// # Misuse
//
// Nothing panics on a queue made by New or a drop-in constructor (the zero
// Typed is not usable). Done for an item that is not being processed changes
// nothing (client-go would queue a second copy). Adds after shutdown drop
// the item — AddWithOptions returns ErrShuttingDown — while items queued
// before the shutdown are still handed out by Get. A zero or negative delay
// adds at once. Each rejected call is logged with klog.FromContext(ctx) at
// V(2) and reported to Options.OnMisuse.
//
// # Concurrency
//
// Every method is safe for concurrent use. One mutex guards the queue; Get
// waits on a sync.Cond (durably blocking under testing/synctest). With
// metrics off, plain Adds go into a small buffer under a lock of their own
// and are applied, in call order, by the next holder of the main lock
// before it does anything else (or by Add itself every 64 adds, or at once
// when a Get is waiting): producers rarely contend with workers, and no
// caller can observe the difference. The
// queue starts at most two goroutines: a delay goroutine on the first
// AddAfter, and a metrics refresher when metrics are enabled. ShutDown (also
// triggered by cancelling New's context) stops both and waits for them;
// ShutDownWithDrain additionally waits until every handed-out item is Done.
//
// Memory: per-item state lives in a slab of fixed-size chunks (growing it
// never copies entries), found through an open-addressing index (one hash
// per call, computed outside the lock; no tombstones), so an item costs no
// allocation once the slab has grown. Done finds recently handed-out items
// without hashing. The index, the FIFO ring and the heaps shrink again after
// a burst (amortised, without thrashing when a queue empties and refills);
// the slab keeps its peak length, with freed entries zeroed so they hold no
// references.
//
// # Differences from client-go
//
//   - No global state: client-go's workqueue.SetProvider does not reach
//     these queues; pass a MetricsProvider (and a Name) explicitly.
//   - The Queue field of TypedDelayingQueueConfig (a whole foreign queue
//     for the delays to feed) is ignored, with a log line. DelayingQueue in
//     TypedRateLimitingQueueConfig and Queue in TypedQueueConfig (custom
//     storage, see "Custom storage") are honoured.
//   - With custom storage, priorities do not order items, and an item the
//     custom Queue pops twice is handed out once.
//   - Done for an item that is not being processed is a no-op (client-go
//     may queue a duplicate).
//   - ItemExponentialRateLimiter returns the cap where client-go's float
//     arithmetic overflows into a negative delay (base 1ns, 63rd failure).
//   - A token bucket with qps ≤ 0 is disabled, instead of delaying for ever
//     once its burst is spent.
//
// # Testing
//
// Inject a Clock (k8s.io/utils/clock/testing.FakeClock satisfies it), or
// run the test in a testing/synctest bubble with the real clock, which is
// what this package's tests do: delays pass in virtual time and
// synctest.Wait shows that a Get is blocked. The compatibility scenarios
// (scenario_test.go) run unchanged against client-go's queue; benchmarks
// compare both in the same run:
//
//	go test -run x -bench . -benchmem -count 3 ./workqueue/
package workqueue
