// Package cache is a fixture of hack/clientgo-reexport's tests: a
// Reflector that has client-go's methods but not its exported fields as
// client-go types them, which must fail the generation.
package cache

import "context"

// Reflector has WatchListPageSize as an int (client-go's is int64) and
// no MaxInternalErrorRetryDuration.
type Reflector struct {
	WatchListPageSize int
	ShouldResync      func() bool
}

func (r *Reflector) Name() string                                  { return "" }
func (r *Reflector) TypeDescription() string                       { return "" }
func (r *Reflector) LastSyncResourceVersion() string               { return "" }
func (r *Reflector) ListAndWatch(<-chan struct{}) error            { return nil }
func (r *Reflector) ListAndWatchWithContext(context.Context) error { return nil }
func (r *Reflector) Run(<-chan struct{})                           {}
func (r *Reflector) RunWithContext(context.Context)                {}
