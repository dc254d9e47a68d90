// Package cache is a fixture of hack/clientgo-reexport's tests: a
// stand-in for clientgo/tools/cache whose Reflector replaces client-go's
// struct with exported fields, each with an identical type, and every
// exported method; the constructors return it.
package cache

import (
	"context"
	"time"

	"k8s.io/client-go/tools/cache"
)

// Reflector has client-go's exported fields and methods.
type Reflector struct {
	WatchListPageSize             int64
	ShouldResync                  func() bool
	MaxInternalErrorRetryDuration time.Duration

	name string
}

func (r *Reflector) Name() string                                  { return r.name }
func (r *Reflector) TypeDescription() string                       { return "" }
func (r *Reflector) LastSyncResourceVersion() string               { return "" }
func (r *Reflector) ListAndWatch(<-chan struct{}) error            { return nil }
func (r *Reflector) ListAndWatchWithContext(context.Context) error { return nil }
func (r *Reflector) Run(<-chan struct{})                           {}
func (r *Reflector) RunWithContext(context.Context)                {}

// NewReflector returns the replacement.
func NewReflector(cache.ListerWatcher, interface{}, cache.ReflectorStore, time.Duration) *Reflector {
	return &Reflector{}
}

// NewReflectorWithOptions returns the replacement.
func NewReflectorWithOptions(cache.ListerWatcher, interface{}, cache.ReflectorStore, cache.ReflectorOptions) *Reflector {
	return &Reflector{}
}

// NewNamedReflector returns the replacement.
func NewNamedReflector(string, cache.ListerWatcher, interface{}, cache.ReflectorStore, time.Duration) *Reflector {
	return &Reflector{}
}

// NewNamespaceKeyedIndexerAndReflector returns the replacement.
func NewNamespaceKeyedIndexerAndReflector(cache.ListerWatcher, interface{}, time.Duration) (cache.Indexer, *Reflector) {
	return nil, &Reflector{}
}
