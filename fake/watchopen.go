package fake

import (
	"context"
	"net/http"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// watchStart is how a watch begins, decided from its options.
type watchStart struct {
	// rvSet and rv are the parsed resourceVersion ("" and "0" are unset).
	rvSet bool
	rv    uint64
	// sendInitial is sendInitialEvents=true; legacyState is a watch without
	// sendInitialEvents at RV "" or "0", which also opens with the state.
	sendInitial, legacyState bool
	// endBookmark asks for the initial-events-end bookmark.
	endBookmark bool
}

func (s *Server) watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	s.stats.watches.Add(1)
	w, err, inStream := s.serveWatch(ctx, gvr, namespace, opts)
	s.record(ctx, Call{Verb: VerbWatch, Resource: gvr, Namespace: namespace, Options: opts, Err: err, InStream: inStream})
	switch {
	case inStream:
		return newErrWatcher(watch.Event{Type: watch.Error, Object: statusOf(err)}), nil
	case err != nil:
		return nil, err
	}
	return w, nil
}

// serveWatch opens a watch. An error with inStream set belongs in the
// stream, as an ERROR event on an accepted watch.
func (s *Server) serveWatch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (w *watcher, err error, inStream bool) {
	s.mu.Lock()
	err, inStream = s.injectedLocked(VerbWatch, gvr, namespace)
	s.mu.Unlock()
	if err != nil {
		return nil, err, inStream
	}
	r, err := s.resource(gvr)
	if err != nil {
		return nil, err, false
	}
	if err := validateOptions(opts, true); err != nil {
		return nil, err, false
	}
	pred, err := newPredicate(r, namespace, opts, s.opts.ShardSelectors)
	if err != nil {
		return nil, err, false
	}
	start, err := parseWatchStart(opts)
	if err != nil {
		return nil, err, false
	}
	if start.sendInitial {
		s.stats.streamingWatches.Add(1)
	}
	if start.sendInitial && start.rvSet {
		if err := s.waitFresh(ctx, start.rv); err != nil {
			return nil, err, true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w, err = s.openLocked(ctx, pred, start, opts)
	if err != nil {
		return nil, err, true
	}
	s.watchers[w] = struct{}{}
	go w.run()
	return w, nil, false
}

func parseWatchStart(opts metav1.ListOptions) (watchStart, error) {
	st := watchStart{sendInitial: opts.SendInitialEvents != nil && *opts.SendInitialEvents}
	if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		rv, err := parseRV(opts.ResourceVersion)
		if err != nil {
			// kube-apiserver answers a watch with a bad RV with a bare 500.
			return st, &apierrors.StatusError{ErrStatus: metav1.Status{
				Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: err.Error()}}
		}
		st.rvSet, st.rv = true, rv
	}
	st.legacyState = opts.SendInitialEvents == nil && !st.rvSet
	st.endBookmark = st.sendInitial && opts.AllowWatchBookmarks
	return st, nil
}

// openLocked builds a watcher with its opening events: the current state
// (sendInitialEvents, or a legacy watch at RV ""/"0"), or the history after
// the requested RV. A compacted RV is a 410.
func (s *Server) openLocked(ctx context.Context, pred predicate, st watchStart, opts metav1.ListOptions) (*watcher, error) {
	var initial []queued
	from := s.rv
	switch {
	case st.sendInitial || st.legacyState:
		initial = s.stateEventsLocked(pred)
		if st.endBookmark {
			initial = append(initial, queued{typ: watch.Bookmark, rv: s.rv, initialEnd: true})
		}
	case st.rvSet:
		if st.rv < s.windowStart {
			return nil, s.errWatchExpired(st.rv)
		}
		from = st.rv
		for _, ev := range s.history {
			if ev.rv <= from {
				continue
			}
			if out, ok := pred.project(ev); ok && ev.res == pred.res {
				initial = append(initial, out)
			}
		}
		from = max(from, s.rv)
	}
	fault, stalled := s.watchFaultLocked(pred.res.cfg.GVR)
	if n := len(initial); fault.DropInitialEventsEnd && n > 0 && initial[n-1].initialEnd {
		initial = initial[:n-1]
	}
	w := &watcher{
		srv:        s,
		pred:       pred,
		bookmarks:  opts.AllowWatchBookmarks,
		out:        make(chan watch.Event),
		done:       make(chan struct{}),
		ctx:        ctx,
		closeAt:    fault.CloseAt,
		closeAfter: fault.CloseAfterEvents,
		delay:      fault.Delay,
		bufferSize: s.opts.WatchBufferSize,
		initial:    initial,
		wake:       make(chan struct{}, 1),
		stalled:    stalled,
		lastRV:     from,
		startRV:    from,
	}
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		w.timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	return w, nil
}

// stateEventsLocked returns an ADDED event per selected object, by key.
func (s *Server) stateEventsLocked(pred predicate) []queued {
	keys := make([]string, 0, len(pred.res.objects))
	for k, obj := range pred.res.objects {
		if pred.matches(obj) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	evs := make([]queued, len(keys))
	for i, k := range keys {
		evs[i] = queued{typ: watch.Added, obj: pred.res.objects[k]}
	}
	return evs
}
