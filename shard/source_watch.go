package shard

import (
	"cmp"
	"context"
	"net/http"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// WatchWithContext watches the member's objects: the part of the cache
// (its last list's). A streaming list (sendInitialEvents) starts a cycle
// under the current part; one the source asked for is served from the
// informer's cache when attached (see Attach), its initial events followed
// by a watch from the cache's resource version. Without a relist function
// (RelistWith, Attach), a watch after a Change fails with 410 Gone: the
// list is stale.
func (s *Source) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	var p *part
	var prefix []watch.Event
	streaming := ptr.Deref(opts.SendInitialEvents, false)
	if streaming {
		done, err := s.startingCycle(ctx)
		if err != nil {
			return nil, err
		}
		defer done()
		if s.takeLocal(false) {
			if p, prefix, err = s.localStream(ctx, opts.ResourceVersion); err == nil {
				// The initial events come from the cache: watch from its
				// resource version on.
				opts.SendInitialEvents, opts.ResourceVersionMatch = nil, ""
			} else if err != errNoLocal {
				s.log.V(1).Info("Relisting from the server: the cache cannot serve it", "err", err)
			}
		}
		if prefix == nil {
			p = s.cyclePart(true)
		}
	} else {
		var taken bool
		var err error
		p, taken, err = s.watchPart(ctx.Err() == nil, opts.ResourceVersion)
		if taken {
			defer s.announce()
		}
		if err != nil {
			return nil, err
		}
	}
	opts.ShardSelector = p.selector
	if p.selector == "" {
		// The member holds nothing, and an empty selector would watch
		// everything: ask for the single hash 0 instead (the client
		// filter, owning nothing, drops even that).
		opts.ShardSelector = RenderSelector(s.field, []Range{{Start: 0, Last: 0}})
	}
	inner, err := s.inner.WatchWithContext(ctx, opts)
	if err != nil {
		s.watchFailed()
		return nil, err
	}
	w := newFilteredWatch(inner, p.matcher, prefix, &s.stats.droppedEvents)
	w.onDone = s.forget
	w.onError = s.watchFailed
	w.onProgress = s.advance
	if streaming {
		w.onSynced = func(rv string) { s.streamed(p, rv) }
	}
	if s.register(w, p) {
		w.start()
	} else {
		w.expire() // an Update slipped in while the watch opened
	}
	return w, nil
}

// watchPart returns the part a plain watch from resource version rv
// serves: the cache's, or without a relist function the current one (410
// Gone when the last list's was another). taken says the watch shows that
// the reflector took the cycle's list (announce after); live is false for
// a watch the reflector abandoned (its context ended) before a later
// cycle started, which may open only now, from a resource version that
// cycle's list shares: it says nothing of what was taken.
func (s *Source) watchPart(live bool, rv string) (p *part, taken bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.st
	taken = live && s.takenLocked(rv)
	p = st.listed
	if st.relist == nil {
		if st.cycle != nil && !st.cycle.same(st.cur) {
			return nil, taken, apierrors.NewResourceExpired("the shard assignment changed since the last list")
		}
		p = st.cur
	}
	return cmp.Or(p, st.cycle, st.cur), taken, nil // no list complete (yet): the list's, or the current part
}

// register adds w to the open watches, unless, without a relist function,
// the current part is no longer p: w must then expire.
func (s *Source) register(w *filteredWatch, p *part) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.relist == nil && !p.same(s.st.cur) {
		return false
	}
	s.st.open[w] = struct{}{}
	return true
}

// localStream serves a streaming relist from the cache (compose): the
// initial events, then the initial-events-end bookmark at rv.
func (s *Source) localStream(ctx context.Context, rv string) (*part, []watch.Event, error) {
	retained, gained, p, err := s.compose(ctx, rv)
	if err != nil {
		return nil, nil, err
	}
	evs := make([]watch.Event, 0, len(retained)+len(gained)+1)
	for _, o := range retained {
		evs = append(evs, watch.Event{Type: watch.Added, Object: o.DeepCopyObject()})
	}
	for _, o := range gained {
		evs = append(evs, watch.Event{Type: watch.Added, Object: o})
	}
	evs = append(evs, watch.Event{Type: watch.Bookmark, Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		ResourceVersion: rv, Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}})
	return p, evs, nil
}

// watchFailed notes that a watch could not be opened or ended in error:
// the reflector relists because it may have lost events, so that relist
// must come from the server, not from the cache.
func (s *Source) watchFailed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.local = false
}

// forget drops an ended watch from the open ones.
func (s *Source) forget(w *filteredWatch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.st.open, w)
}

// filteredWatch passes on the events of an inner watch whose objects the
// matcher owns (bookmarks and errors always), after a prefix of events of
// its own, until it is stopped, the inner watch ends, or it is expired:
// then it sends a 410 Gone error event and ends.
type filteredWatch struct {
	// inner is the server's watch; stopped when run ends.
	inner watch.Interface
	// matcher decides which objects pass; never nil.
	matcher *Matcher
	// prefix are sent first, unfiltered.
	prefix []watch.Event
	// onDone, if set, is called when run ends; onError when an error
	// event passes; onSynced with the resource version of an
	// initial-events-end bookmark that passes; onProgress with the
	// resource version of every object event or bookmark from the inner
	// watch, once passed on or dropped (not for a streaming list's
	// initial events, whose order says nothing). Set before start.
	onDone     func(*filteredWatch)
	onError    func()
	onSynced   func(rv string)
	onProgress func(rv string)
	// synced is set once the initial-events-end bookmark has passed.
	synced bool
	// dropped, if set, counts the events the filter drops.
	dropped *atomic.Int64
	// out is the filtered stream; closed when run ends.
	out chan watch.Event
	// stop is closed by Stop; stopOnce guards it.
	stop     chan struct{}
	stopOnce sync.Once
	// expired is closed by expire; expireOnce guards it.
	expired    chan struct{}
	expireOnce sync.Once
	// startOnce guards the goroutine's start (start or expire).
	startOnce sync.Once
	// done is closed when run has ended.
	done chan struct{}
}

// newFilteredWatch filters inner through m after prefix; dropped
// (optional) counts dropped events. It runs once started (start, or
// expire).
func newFilteredWatch(inner watch.Interface, m *Matcher, prefix []watch.Event, dropped *atomic.Int64) *filteredWatch {
	return &filteredWatch{inner: inner, matcher: m, prefix: prefix, dropped: dropped, out: make(chan watch.Event),
		stop: make(chan struct{}), expired: make(chan struct{}), done: make(chan struct{})}
}

// start runs the watch's goroutine.
func (w *filteredWatch) start() { w.startOnce.Do(func() { go w.run() }) }

// ResultChan implements watch.Interface.
func (w *filteredWatch) ResultChan() <-chan watch.Event { return w.out }

// Stop implements watch.Interface.
func (w *filteredWatch) Stop() { w.stopOnce.Do(func() { close(w.stop) }) }

// expire ends the watch with 410 Gone.
func (w *filteredWatch) expire() {
	w.expireOnce.Do(func() { close(w.expired) })
	w.start()
}

// gone is the error event expire sends.
var gone = watch.Event{Type: watch.Error, Object: &metav1.Status{
	Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired,
	Message: "the shard assignment changed",
}}

func (w *filteredWatch) run() {
	defer close(w.done)
	defer close(w.out)
	defer w.inner.Stop()
	if w.onDone != nil {
		defer w.onDone(w)
	}
	for _, ev := range w.prefix {
		if !w.pass(ev) {
			return
		}
	}
	w.prefix = nil
	in := w.inner.ResultChan()
	for {
		var ev watch.Event
		select {
		case <-w.stop:
			return
		case <-w.expired:
			w.send(gone)
			return
		case e, ok := <-in:
			if !ok {
				return
			}
			ev = e
		}
		if !w.keep(ev) {
			if w.dropped != nil {
				w.dropped.Add(1)
			}
			w.progress(ev)
			continue
		}
		if !w.pass(ev) {
			return
		}
		w.progress(ev)
	}
}

// progress reports ev's resource version to onProgress, once the stream
// is past any initial events (the initial-events-end bookmark ends them).
func (w *filteredWatch) progress(ev watch.Event) {
	if w.onProgress == nil || w.onSynced != nil && !w.synced {
		return
	}
	if o, err := meta.Accessor(ev.Object); err == nil && ev.Type != watch.Error {
		w.onProgress(o.GetResourceVersion())
	}
}

// pass delivers ev; false when the watch ended first (stopped, or
// expired: then the 410 was sent).
func (w *filteredWatch) pass(ev watch.Event) bool {
	if ev.Type == watch.Error && w.onError != nil {
		w.onError()
	}
	select {
	case w.out <- ev:
		// The initial-events-end bookmark is told once the reflector has
		// it: a stream it abandons before then was never taken.
		if ev.Type == watch.Bookmark && w.onSynced != nil {
			if o, err := meta.Accessor(ev.Object); err == nil && o.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
				w.onSynced(o.GetResourceVersion())
				w.synced = true
			}
		}
		return true
	case <-w.stop:
		return false
	case <-w.expired:
		w.send(gone)
		return false
	}
}

// send delivers ev unless the watch is stopped first.
func (w *filteredWatch) send(ev watch.Event) {
	select {
	case w.out <- ev:
	case <-w.stop:
	}
}

// keep reports whether ev passes the filter.
func (w *filteredWatch) keep(ev watch.Event) bool {
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted:
		o, err := meta.Accessor(ev.Object)
		if err != nil {
			return true // the reflector reports objects without metadata
		}
		return w.matcher.Owns(o)
	default:
		return true
	}
}
