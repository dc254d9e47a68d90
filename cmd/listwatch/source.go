package main

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/reflector"
)

// countingSource wraps a ListerWatcher: it ANDs in the selectors, counts
// list pages and listed items (the progress of a long initial list, which
// the store only sees when the last page has arrived).
type countingSource struct {
	inner         cache.ListerWatcherWithContext
	label, field  string       // selectors added to every call; "" none
	pages, listed atomic.Int64 // since the start of the current list cycle
}

func (s *countingSource) apply(o metav1.ListOptions) metav1.ListOptions {
	if s.label != "" {
		o.LabelSelector = s.label
	}
	if s.field != "" {
		o.FieldSelector = s.field
	}
	return o
}

func (s *countingSource) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	if o.Continue == "" {
		s.pages.Store(0)
		s.listed.Store(0)
	}
	obj, err := s.inner.ListWithContext(ctx, s.apply(o))
	if err == nil {
		s.pages.Add(1)
		s.listed.Add(int64(meta.LenList(obj)))
	}
	return obj, err
}

func (s *countingSource) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return s.inner.WatchWithContext(ctx, s.apply(o))
}

// counters implements reflector.Metrics with atomics, for status lines and
// summaries.
type counters struct {
	lists, watches, events atomic.Int64
	mu                     sync.Mutex // guards the maps
	relists                map[string]int
	errors                 map[string]int
}

var _ reflector.Metrics = (*counters)(nil)

func newCounters() *counters {
	return &counters{relists: map[string]int{}, errors: map[string]int{}}
}

func (c *counters) List()  { c.lists.Add(1) }
func (c *counters) Watch() { c.watches.Add(1) }
func (c *counters) Relist(cause reflector.Reason) {
	if cause == reflector.ReasonNone {
		return
	}
	c.mu.Lock()
	c.relists[cause.String()]++
	c.mu.Unlock()
}
func (c *counters) Event(t watch.EventType) {
	if t != watch.Bookmark && t != watch.Error {
		c.events.Add(1)
	}
}
func (c *counters) Error(class reflector.Reason) {
	c.mu.Lock()
	c.errors[class.String()]++
	c.mu.Unlock()
}
func (c *counters) ResourceVersion(string) {}

// snapshot copies the per-reason maps.
func (c *counters) snapshot() (relists, errs map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.relists), maps.Clone(c.errors)
}
