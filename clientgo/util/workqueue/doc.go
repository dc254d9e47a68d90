// Package workqueue is k8s.io/client-go/util/workqueue on listwatch's
// queue (package workqueue at the module root): client-go code switches by
// changing the import path's prefix from k8s.io/client-go/ to
// github.com/listwatch/listwatch/clientgo/.
//
// Every queue constructor of client-go's package is listwatch's and returns
// listwatch's queue (Typed is its type), honouring client-go's configs:
// NewTyped, NewTypedWithConfig (a custom Queue storage included),
// NewTypedDelayingQueue, NewTypedDelayingQueueWithConfig,
// NewTypedRateLimitingQueue, NewTypedRateLimitingQueueWithConfig (a custom
// DelayingQueue included) and the untyped ones at any. The rate limiters
// and every other identifier are client-go's own, re-exported
// (zz_generated.reexport.go); listwatch's queue accepts them, and its own
// generic limiters are in package workqueue.
//
// # Usage
//
//	import "github.com/listwatch/listwatch/clientgo/util/workqueue" // was k8s.io/client-go/util/workqueue
//
//	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
//		workqueue.TypedRateLimitingQueueConfig[string]{Name: "pods"})
//
// # Concurrency
//
// As client-go's: a queue is safe for concurrent use.
//
// # Testing
//
// The tests run each constructor and client-go's on the same script (metrics,
// clocks, custom storage) and compare; make peer runs client-go's own
// queue tests against it.
package workqueue
