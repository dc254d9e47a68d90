package workqueue

import (
	"context"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	cgworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/listwatch/listwatch/workqueue"
)

// Compile-time proof that listwatch's queue is a drop-in for client-go's
// interfaces and that its limiters are client-go limiters (and vice versa).
var (
	_ cgworkqueue.TypedRateLimitingInterface[string] = (*workqueue.Typed[string])(nil)
	_ cgworkqueue.TypedRateLimiter[string]           = workqueue.RateLimiter[string](nil)
	_ workqueue.RateLimiter[string]                  = cgworkqueue.TypedRateLimiter[string](nil)
)

// Typed is listwatch's queue (package workqueue), which client-go's
// constructors of this package return: client-go code that names the
// concrete *workqueue.Typed[T] keeps compiling. Type is Typed at any, as
// in client-go.
type (
	Typed[T comparable] = workqueue.Typed[T]
	Type                = Typed[any]
)

// NewTyped is the drop-in for client-go's workqueue.NewTyped: an unnamed
// queue without metrics on the real clock.
func NewTyped[T comparable]() *Typed[T] {
	return workqueue.New(context.Background(), workqueue.Options[T]{})
}

// NewTypedWithConfig is the drop-in for client-go's constructor of the same
// name. Name, MetricsProvider, Clock and Queue are honoured: a custom Queue
// stores and orders the ready items, called as client-go calls it (see
// "Custom storage" in the package documentation).
func NewTypedWithConfig[T comparable](config cgworkqueue.TypedQueueConfig[T]) *Typed[T] {
	return workqueue.New(context.Background(), workqueue.Options[T]{
		Name:            config.Name,
		MetricsProvider: config.MetricsProvider,
		Clock:           clockOrNil(config.Clock),
		Storage:         config.Queue,
	})
}

// NewTypedDelayingQueue is the drop-in for client-go's constructor of the
// same name.
func NewTypedDelayingQueue[T comparable]() cgworkqueue.TypedDelayingInterface[T] {
	return NewTyped[T]()
}

// NewTypedDelayingQueueWithConfig is the drop-in for client-go's constructor
// of the same name. Logger, Name, MetricsProvider and Clock are honoured;
// config.Queue (a whole foreign queue for the delays to feed, unlike
// TypedQueueConfig.Queue) is not supported (ignored and logged).
func NewTypedDelayingQueueWithConfig[T comparable](config cgworkqueue.TypedDelayingQueueConfig[T]) cgworkqueue.TypedDelayingInterface[T] {
	ctx := context.Background()
	if config.Logger != nil {
		ctx = klog.NewContext(ctx, *config.Logger)
	}
	if config.Queue != nil {
		klog.FromContext(ctx).Info("workqueue: TypedDelayingQueueConfig.Queue is not supported and is ignored", "queue", config.Name)
	}
	return workqueue.New(ctx, workqueue.Options[T]{
		Name:            config.Name,
		MetricsProvider: config.MetricsProvider,
		Clock:           clockOrNil(config.Clock),
	})
}

// NewTypedRateLimitingQueue is the drop-in for client-go's constructor of
// the same name. limiter may come from this package or from client-go; nil
// means DefaultControllerRateLimiter. Remember to call Forget.
func NewTypedRateLimitingQueue[T comparable](limiter cgworkqueue.TypedRateLimiter[T]) cgworkqueue.TypedRateLimitingInterface[T] {
	return workqueue.New(context.Background(), workqueue.Options[T]{RateLimiter: limiter})
}

// NewTypedRateLimitingQueueWithConfig is the drop-in for client-go's
// constructor of the same name. Name, MetricsProvider and Clock are
// honoured. A custom config.DelayingQueue is supported: the result then
// wraps it and only adds the rate limiting, as client-go does.
func NewTypedRateLimitingQueueWithConfig[T comparable](limiter cgworkqueue.TypedRateLimiter[T], config cgworkqueue.TypedRateLimitingQueueConfig[T]) cgworkqueue.TypedRateLimitingInterface[T] {
	if limiter == nil {
		limiter = workqueue.DefaultControllerRateLimiter[T]()
	}
	if config.DelayingQueue != nil {
		return &rateLimitedWrapper[T]{TypedDelayingInterface: config.DelayingQueue, limiter: limiter}
	}
	return workqueue.New(context.Background(), workqueue.Options[T]{
		Name:            config.Name,
		MetricsProvider: config.MetricsProvider,
		Clock:           clockOrNil(config.Clock),
		RateLimiter:     limiter,
	})
}

// rateLimitedWrapper adds rate limiting to a foreign delaying queue.
type rateLimitedWrapper[T comparable] struct {
	cgworkqueue.TypedDelayingInterface[T]
	limiter workqueue.RateLimiter[T] // never nil
}

func (w *rateLimitedWrapper[T]) AddRateLimited(item T) { w.AddAfter(item, w.limiter.When(item)) }
func (w *rateLimitedWrapper[T]) Forget(item T)         { w.limiter.Forget(item) }
func (w *rateLimitedWrapper[T]) NumRequeues(item T) int {
	return w.limiter.NumRequeues(item)
}

// clockOrNil converts a possibly nil client-go clock without producing a
// non-nil interface that holds nil.
func clockOrNil(c clock.WithTicker) workqueue.Clock {
	if c == nil {
		return nil
	}
	return c
}
