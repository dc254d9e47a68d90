//lint:file-ignore SA1019 client-go's untyped constructors take and return its deprecated untyped types, as these drop-ins must.

package workqueue

import (
	"k8s.io/utils/clock"

	cgworkqueue "k8s.io/client-go/util/workqueue"
)

// client-go's untyped constructors (deprecated there in favour of the
// typed ones) are the typed ones at any, as in client-go; each returns
// listwatch's queue.

// New is client-go's workqueue.New: NewTyped at any.
func New() *Type { return NewTyped[any]() }

// NewWithConfig is client-go's workqueue.NewWithConfig.
func NewWithConfig(config cgworkqueue.QueueConfig) *Type { return NewTypedWithConfig(config) }

// NewNamed is client-go's workqueue.NewNamed.
func NewNamed(name string) *Type {
	return NewWithConfig(cgworkqueue.QueueConfig{Name: name})
}

// NewDelayingQueue is client-go's workqueue.NewDelayingQueue.
func NewDelayingQueue() cgworkqueue.DelayingInterface { return NewTypedDelayingQueue[any]() }

// NewDelayingQueueWithConfig is client-go's
// workqueue.NewDelayingQueueWithConfig; see NewTypedDelayingQueueWithConfig.
func NewDelayingQueueWithConfig(config cgworkqueue.DelayingQueueConfig) cgworkqueue.DelayingInterface {
	return NewTypedDelayingQueueWithConfig(config)
}

// NewNamedDelayingQueue is client-go's workqueue.NewNamedDelayingQueue.
func NewNamedDelayingQueue(name string) cgworkqueue.DelayingInterface {
	return NewDelayingQueueWithConfig(cgworkqueue.DelayingQueueConfig{Name: name})
}

// NewDelayingQueueWithCustomClock is client-go's
// workqueue.NewDelayingQueueWithCustomClock.
func NewDelayingQueueWithCustomClock(clock clock.WithTicker, name string) cgworkqueue.DelayingInterface {
	return NewDelayingQueueWithConfig(cgworkqueue.DelayingQueueConfig{Name: name, Clock: clock})
}

// NewRateLimitingQueue is client-go's workqueue.NewRateLimitingQueue.
// Remember to call Forget.
func NewRateLimitingQueue(rateLimiter cgworkqueue.RateLimiter) cgworkqueue.RateLimitingInterface {
	return NewTypedRateLimitingQueue(rateLimiter)
}

// NewRateLimitingQueueWithConfig is client-go's
// workqueue.NewRateLimitingQueueWithConfig; see
// NewTypedRateLimitingQueueWithConfig.
func NewRateLimitingQueueWithConfig(rateLimiter cgworkqueue.RateLimiter, config cgworkqueue.RateLimitingQueueConfig) cgworkqueue.RateLimitingInterface {
	return NewTypedRateLimitingQueueWithConfig(rateLimiter, config)
}

// NewNamedRateLimitingQueue is client-go's
// workqueue.NewNamedRateLimitingQueue.
func NewNamedRateLimitingQueue(rateLimiter cgworkqueue.RateLimiter, name string) cgworkqueue.RateLimitingInterface {
	return NewRateLimitingQueueWithConfig(rateLimiter, cgworkqueue.RateLimitingQueueConfig{Name: name})
}

// NewRateLimitingQueueWithDelayingInterface is client-go's
// workqueue.NewRateLimitingQueueWithDelayingInterface: rate limiting on
// top of di.
func NewRateLimitingQueueWithDelayingInterface(di cgworkqueue.DelayingInterface, rateLimiter cgworkqueue.RateLimiter) cgworkqueue.RateLimitingInterface {
	return NewRateLimitingQueueWithConfig(rateLimiter, cgworkqueue.RateLimitingQueueConfig{DelayingQueue: di})
}
