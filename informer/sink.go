package informer

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/listwatch/listwatch/deltafifo"
	"github.com/listwatch/listwatch/store"
)

// sink sits between the reflector and the FIFO. It passes writes through
// and tracks the newest resource version handed over, so that the informer
// can tell when the store reflects a given RV (WaitForResourceVersion).
type sink[T store.Object] struct {
	fifo *deltafifo.FIFO[T]
	// queued is the highest numeric RV handed to the FIFO or announced by a
	// bookmark. It is raised only after the write it belongs to is queued.
	queued atomic.Uint64
	rv     *rvWatermark
	// replaced is called after every successful Replace.
	replaced func()
}

func (s *sink[T]) Add(obj T) error    { return s.after(obj.GetResourceVersion(), s.fifo.Add(obj)) }
func (s *sink[T]) Update(obj T) error { return s.after(obj.GetResourceVersion(), s.fifo.Update(obj)) }
func (s *sink[T]) Delete(obj T) error { return s.after(obj.GetResourceVersion(), s.fifo.Delete(obj)) }

func (s *sink[T]) Replace(items []T, rv string) error {
	err := s.after(rv, s.fifo.Replace(items, rv))
	if err == nil {
		s.replaced()
		s.drained()
	}
	return err
}

// ReplacePage queues one page of a paginated list, then holds the
// reflector back until the FIFO is down to about a page: the list is
// applied as it arrives, and the objects it replaces are released as it
// goes, rather than the whole new list being queued next to the cache.
// The wait ends early when the FIFO is closed (the informer is stopping).
func (s *sink[T]) ReplacePage(items []T, first bool) error {
	if err := s.fifo.ReplacePage(items, first); err != nil {
		return err
	}
	_ = s.fifo.WaitLen(context.Background(), max(len(items), minPageBacklog))
	return nil
}

// minPageBacklog is the least backlog ReplacePage lets the reflector
// keep, so that small pages still overlap fetching with processing.
const minPageBacklog = 64

// ReplaceEnd completes a paginated list: see ReplacePage.
func (s *sink[T]) ReplaceEnd(rv string) error {
	err := s.after(rv, s.fifo.ReplaceEnd(rv))
	if err == nil {
		s.replaced()
		s.drained()
	}
	return err
}

// UpdateResourceVersion records a bookmark: nothing changes, but everything
// up to rv is now known. If the FIFO is idle the store already reflects it.
func (s *sink[T]) UpdateResourceVersion(rv string) {
	s.after(rv, nil)
	s.drained()
}

func (s *sink[T]) after(rv string, err error) error {
	if err == nil {
		if n, perr := strconv.ParseUint(rv, 10, 64); perr == nil {
			for {
				cur := s.queued.Load()
				if n <= cur || s.queued.CompareAndSwap(cur, n) {
					break
				}
			}
		}
	}
	return err
}

// drained advances the applied watermark if the FIFO holds nothing: the
// RV read first was queued before the emptiness check, and processing runs
// under the FIFO's lock, so an empty FIFO means it has been applied.
func (s *sink[T]) drained() {
	rv := s.queued.Load()
	if s.fifo.Len() == 0 {
		s.rv.advance(rv)
	}
}

// rvWatermark is the highest RV the store is known to reflect, with a way
// to wait for it to reach a value.
type rvWatermark struct {
	mu sync.Mutex
	// applied only grows.
	applied uint64
	// changed is closed and replaced whenever applied grows.
	changed chan struct{}
}

func newRVWatermark() *rvWatermark { return &rvWatermark{changed: make(chan struct{})} }

func (w *rvWatermark) advance(rv uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rv > w.applied {
		w.applied = rv
		close(w.changed)
		w.changed = make(chan struct{})
	}
}

// get returns the applied RV and a channel closed when it next grows.
func (w *rvWatermark) get() (uint64, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.applied, w.changed
}
