// Package workqueue is a fixture of hack/clientgo-reexport's tests: a
// stand-in for clientgo/util/workqueue with hand-written declarations that
// client-go's package also exports, each in one of the accepted ways.
package workqueue

import (
	"time"

	"k8s.io/client-go/util/workqueue"
)

// NewTyped has client-go's generic signature exactly (its type parameter
// named differently).
func NewTyped[E comparable]() *workqueue.Typed[E] { return workqueue.NewTyped[E]() }

// QueueConfig is an alias of client-go's type.
type QueueConfig = workqueue.QueueConfig

// TypedInterface is a generic alias of client-go's generic type.
type TypedInterface[T comparable] = workqueue.TypedInterface[T]

// NewMaxOfRateLimiter returns a concrete type where client-go's returns the
// RateLimiter interface: assignable, reported.
func NewMaxOfRateLimiter(limiters ...workqueue.TypedRateLimiter[any]) *workqueue.TypedMaxOfRateLimiter[any] {
	return workqueue.NewTypedMaxOfRateLimiter(limiters...).(*workqueue.TypedMaxOfRateLimiter[any])
}

// GaugeMetric is a distinct interface type with client-go's method set:
// reported.
type GaugeMetric interface {
	Inc()
	Dec()
}

// helper is unexported: not compared with anything.
func helper() time.Duration { return 0 }
