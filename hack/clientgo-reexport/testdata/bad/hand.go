// Package workqueue is a fixture of hack/clientgo-reexport's tests:
// hand-written declarations that do not match client-go's, each of which
// must fail the generation.
package workqueue

import "k8s.io/client-go/util/workqueue"

// NewNamed has a parameter more than client-go's.
func NewNamed(name string, size int) *workqueue.Type { return workqueue.NewNamed(name) }

// QueueConfig is a struct of its own, not client-go's.
type QueueConfig struct{ Name string }

// ParallelizeUntil is a variable where client-go's is a function.
var ParallelizeUntil = workqueue.ParallelizeUntil

// NewTyped returns the interface where client-go's returns *Typed[T].
func NewTyped[T comparable]() workqueue.TypedInterface[T] { return workqueue.NewTyped[T]() }
