package informer

import (
	"context"
	"sync"

	"github.com/listwatch/listwatch/deltafifo"
	"github.com/listwatch/listwatch/internal/resourceversion"
	"github.com/listwatch/listwatch/store"
)

// sink sits between the reflector and the FIFO. It passes writes through
// and tracks the resource version of the last write handed over, so that
// the informer can tell when the store reflects a given RV
// (WaitForResourceVersion).
type sink[T store.Object] struct {
	fifo *deltafifo.FIFO[T]
	// ctx is the context the reflector runs under, set by Run before it
	// starts the reflector: ReplacePage's wait for the pop loop ends with
	// it. Until then (a sink driven directly, in tests) it never ends.
	ctx context.Context
	// mu orders updates of queued against the FIFO-empty check that turns
	// queued into the applied watermark.
	mu sync.Mutex
	// queued is the numeric RV of the last list, event or bookmark handed to
	// the FIFO, in the order they were handed over: not the highest ever
	// seen, so one event from the far future does not pin it. Set only
	// after the write it belongs to is queued; writes without a numeric RV
	// leave it alone. queuedRV is its text, as the server sent it.
	queued   uint64
	queuedRV string
	rv       *rvWatermark
	// admit transforms each object, or drops it, before it is queued.
	admit *admission[T]
	// paging is set from a list's first ReplacePage to its ReplaceEnd (or
	// a Replace): the store is then a mix of the old content and the new,
	// so the writes queued meanwhile (a streamed deletion) do not move the
	// watermark. Used only from the reflector's goroutine.
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
// RV of an object dropped by the Transform still counts (the object is
// never cached); that of an object of the wrong type does not.
func (s *sink[T]) write(obj T, typ deltafifo.DeltaType) error {
	rv := obj.GetResourceVersion()
	if s.paging {
		rv = "" // says nothing about what the store reflects
	}
	switch out, v := s.admit.admit(obj); v {
	case admitted:
		if s.whole && s.paging {
			s.held = append(s.held, heldWrite[T]{typ, out})
			return nil
		}
		return s.after(rv, s.queue(typ, out))
	case dropped:
		return s.after(rv, nil)
	}
	return nil
}

func (s *sink[T]) Replace(items []T, rv string) error {
	s.paging = false
	s.gathered, s.held = nil, nil // a whole list supersedes one in pages
	s.admit.listStarted()
	err := s.after(rv, s.fifo.Replace(s.admit.admitList(items), rv))
	if err == nil {
		s.admit.listDone()
		s.replaced()
		s.drained()
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
		err = s.after(rv, s.fifo.Replace(s.gathered, rv))
		for _, w := range s.held {
			if err == nil {
				err = s.queue(w.typ, w.obj)
			}
		}
		s.gathered, s.held = nil, nil // the FIFO holds the objects now
	} else {
		err = s.after(rv, s.fifo.ReplaceEnd(rv))
	}
	if err == nil {
		s.admit.listDone()
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

// after records rv as the last RV queued once the write it came with (err
// is its result) has been queued, and moves the watermark if that write has
// been applied already.
func (s *sink[T]) after(rv string, err error) error {
	if err != nil {
		return err
	}
	n, ok := resourceversion.Parse(rv)
	if !ok {
		return nil // "" or junk: says nothing about what the store reflects
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queued, s.queuedRV = n, rv
	s.drainedLocked()
	return nil
}

// drained moves the applied watermark to the last RV queued if the FIFO
// holds nothing: under mu, queued cannot change between reading it and the
// emptiness check, processing runs under the FIFO's lock, and a write is
// counted by Len until it has been applied, so an empty FIFO means the
// write that carried queued has been applied.
func (s *sink[T]) drained() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drainedLocked()
}

func (s *sink[T]) drainedLocked() {
	if s.queued != 0 && s.fifo.Len() == 0 {
		s.rv.set(s.queued, s.queuedRV)
	}
}

// rvWatermark is the RV the store is known to reflect (the last list,
// event or bookmark applied, in order), with a way to wait for it to reach
// a value. Its one home is the store's resource version: set records it
// there, so the typed reader, the informer and the drop-in's indexer and
// informer all report the same RV. It can go down: a relist from a lagging
// cache, or a write with a smaller RV after a bogus large one, leaves the
// store reflecting an older state, and a waiter must then wait again.
type rvWatermark struct {
	// record writes the RV to the store (store.Store.Bookmark).
	record  func(rv string)
	mu      sync.Mutex
	applied uint64
	// changed is closed and replaced whenever applied changes.
	changed chan struct{}
}

func newRVWatermark(record func(rv string)) *rvWatermark {
	return &rvWatermark{record: record, changed: make(chan struct{})}
}

// set records rv, whose numeric value is n, as applied.
func (w *rvWatermark) set(n uint64, rv string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.record(rv)
	if n != w.applied {
		w.applied = n
		close(w.changed)
		w.changed = make(chan struct{})
	}
}

// get returns the applied RV and a channel closed when it next changes.
func (w *rvWatermark) get() (uint64, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.applied, w.changed
}
