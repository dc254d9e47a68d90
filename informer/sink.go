package informer

import (
	"context"
	"sync"

	"github.com/listwatch/listwatch/deltafifo"
	"github.com/listwatch/listwatch/internal/resourceversion"
	"github.com/listwatch/listwatch/store"
)

// sink sits between the reflector and the FIFO: it admits each object
// (Transform, type check) and hands it over. The resource versions it
// hands over travel through the FIFO with the objects (a write's own, a
// list's, a bookmark's through FIFO.Progress), and the apply stage records
// the store's resource version, the watermark WaitForResourceVersion waits
// on, in the transaction of the batch that empties the queue (the FIFO's
// ListProgress item): the store has one writer, the pop loop.
type sink[T store.Object] struct {
	fifo *deltafifo.FIFO[T]
	// ctx is the context the reflector runs under, set by Run before it
	// starts the reflector: ReplacePage's wait for the pop loop ends with
	// it. Until then (a sink driven directly, in tests) it never ends.
	ctx context.Context
	// admit transforms each object, or drops it, before it is queued.
	admit *admission[T]
	// paging is set from a list's first ReplacePage to its ReplaceEnd (or
	// a Replace). Used only from the reflector's goroutine.
	paging bool
	// replaced is called after every successful Replace.
	replaced func()
	// whole (Options.AtomicRelists) gathers a paginated list's pages in
	// gathered and queues them as one Replace at its end, so that the FIFO
	// hands the list over in one batch; the writes that come meanwhile (a
	// streamed deletion) are held in order and queued after it.
	whole    bool
	gathered []T
	held     []heldWrite[T]
}

// heldWrite is a write that came during a gathered list.
type heldWrite[T any] struct {
	typ deltafifo.DeltaType
	obj T
}

func (s *sink[T]) Add(obj T) error    { return s.write(obj, deltafifo.Added) }
func (s *sink[T]) Update(obj T) error { return s.write(obj, deltafifo.Updated) }
func (s *sink[T]) Delete(obj T) error { return s.write(obj, deltafifo.Deleted) }

// queue hands a watch event's object to the FIFO. (A method value such as
// s.fifo.Add, kept in a heldWrite, would cost an allocation per event.)
func (s *sink[T]) queue(typ deltafifo.DeltaType, obj T) error {
	switch typ {
	case deltafifo.Added:
		return s.fifo.Add(obj)
	case deltafifo.Updated:
		return s.fifo.Update(obj)
	}
	return s.fifo.Delete(obj)
}

// write queues one watch event's object, unless admission drops it. The
// resource version of an object dropped by the Transform still counts
// (the object is never cached, but the cache has got that far); that of an
// object of the wrong type does not.
func (s *sink[T]) write(obj T, typ deltafifo.DeltaType) error {
	switch out, v := s.admit.admit(obj); v {
	case admitted:
		if s.whole && s.paging {
			s.held = append(s.held, heldWrite[T]{typ, out})
			return nil
		}
		return s.queue(typ, out)
	case dropped:
		if !s.paging {
			s.fifo.Progress(obj.GetResourceVersion())
		}
	}
	return nil
}

func (s *sink[T]) Replace(items []T, rv string) error {
	s.paging = false
	s.gathered, s.held = nil, nil // a whole list supersedes one in pages
	s.admit.listStarted()
	err := s.fifo.Replace(s.admit.admitList(items), rv)
	if err == nil {
		s.admit.listDone()
		s.replaced()
	}
	return err
}

// ReplacePage queues one page of a paginated list, then holds the
// reflector back until the FIFO is down to about a page: the list is
// applied as it arrives, and the objects it replaces are released as it
// goes, rather than the whole new list being queued next to the cache.
// The wait ends early when the FIFO is closed or the reflector's context
// ends (the informer is stopping): the page is queued either way.
func (s *sink[T]) ReplacePage(items []T, first bool) error {
	if first {
		s.paging = true
		s.admit.listStarted()
		s.gathered, s.held = nil, nil
	}
	items = s.admit.admitList(items)
	if s.whole {
		s.gathered = append(s.gathered, items...)
		return nil
	}
	if err := s.fifo.ReplacePage(items, first); err != nil {
		return err
	}
	_ = s.fifo.WaitLen(s.ctx, max(len(items), minPageBacklog))
	return nil
}

// minPageBacklog is the least backlog ReplacePage lets the reflector
// keep, so that small pages still overlap fetching with processing.
const minPageBacklog = 64

// ReplaceEnd completes a paginated list: see ReplacePage.
func (s *sink[T]) ReplaceEnd(rv string) error {
	s.paging = false
	var err error
	if s.whole {
		err = s.fifo.Replace(s.gathered, rv)
		for _, w := range s.held {
			if err == nil {
				err = s.queue(w.typ, w.obj)
			}
		}
		s.gathered, s.held = nil, nil // the FIFO holds the objects now
	} else {
		err = s.fifo.ReplaceEnd(rv)
	}
	if err == nil {
		s.admit.listDone()
		s.replaced()
	}
	return err
}

// UpdateResourceVersion records a bookmark: nothing changes, but
// everything up to rv is now known (FIFO.Progress).
func (s *sink[T]) UpdateResourceVersion(rv string) { s.fifo.Progress(rv) }

// rvWatermark is the RV the store is known to reflect (the last list,
// event or bookmark applied, in order), with a way to wait for it to reach
// a value. The apply stage records it, as the store's resource version in
// the batch's transaction and here, after it. It can go down: a relist
// from a lagging cache, or a write with a smaller RV after a bogus large
// one, leaves the store reflecting an older state, and a waiter must then
// wait again.
type rvWatermark struct {
	mu      sync.Mutex
	applied uint64
	// changed, when not nil, is what a waiter was given: it is closed (and
	// set to nil) when applied changes. A watermark nobody waits on makes
	// no channel per batch.
	changed chan struct{}
}

func newRVWatermark() *rvWatermark { return &rvWatermark{} }

// set records rv, a numeric resource version the store now reflects.
func (w *rvWatermark) set(rv string) {
	n, ok := resourceversion.Parse(rv)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if n != w.applied {
		w.applied = n
		if w.changed != nil {
			close(w.changed)
			w.changed = nil
		}
	}
}

// peek returns the applied RV.
func (w *rvWatermark) peek() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.applied
}

// get returns the applied RV and a channel closed when it next changes.
func (w *rvWatermark) get() (uint64, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.changed == nil {
		w.changed = make(chan struct{})
	}
	return w.applied, w.changed
}
