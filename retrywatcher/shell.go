package retrywatcher

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// shell executes a Machine's effects: it owns the goroutine, the open watch
// and the timer, and feeds outcomes back to the machine as inputs, stepped
// at the clock's time. Opening a watch and listing are synchronous: their
// outcome is stepped at once and its effects run after the rest of the
// batch.
type shell struct {
	rw   *RetryWatcher
	m    *Machine
	opts Options
	log  logr.Logger
	// w is the open watch, nil when none is open.
	w watch.Interface
	// openedAt is when w was opened (for the log).
	openedAt time.Time
	// malformedLogged is set once w's first malformed bookmark is logged.
	malformedLogged bool
}

func (s *shell) run(ctx context.Context) {
	defer close(s.rw.done)
	defer close(s.rw.result)
	defer s.closeWatch()
	queue := s.m.Start(s.opts.Clock.Now())
	for {
		for len(queue) > 0 {
			e := queue[0]
			queue = queue[1:]
			in, finished := s.exec(ctx, e)
			if finished {
				return
			}
			if in != nil {
				queue = append(queue, s.step(in)...)
			}
		}
		queue = s.step(s.next(ctx))
	}
}

func (s *shell) step(in Input) []Effect { return s.m.Step(s.opts.Clock.Now(), in) }

// next waits for the next event of the open watch, the machine's deadline,
// or the end.
func (s *shell) next(ctx context.Context) Input {
	at, wake := s.m.Deadline()
	if s.w == nil && !wake {
		// Only reachable if the machine emitted nothing while not watching
		// or waiting, which would be a bug; stop rather than spin.
		s.log.Error(nil, "no open watch and nothing to do; stopping", "phase", s.m.Phase())
		return Stop{}
	}
	var events <-chan watch.Event
	if s.w != nil {
		events = s.w.ResultChan()
	}
	var fire <-chan time.Time
	if wake {
		t := s.opts.Clock.NewTimer(max(at.Sub(s.opts.Clock.Now()), 0))
		defer t.Stop()
		fire = t.C()
	}
	select {
	case <-ctx.Done():
		return Stop{}
	case <-fire:
		return Tick{}
	case ev, ok := <-events:
		if !ok {
			s.log.V(4).Info("watch closed", "resourceVersion", s.m.ResourceVersion(), "lasted", s.opts.Clock.Since(s.openedAt))
			s.closeWatch()
			return WatchClosed{}
		}
		return WatchEvent{Event: ev}
	}
}

// exec runs one effect, returning the input it produced (nil for none) and
// whether the shell is finished.
func (s *shell) exec(ctx context.Context, e Effect) (Input, bool) {
	switch e := e.(type) {
	case OpenWatch:
		return s.open(ctx, e.ResourceVersion), false
	case CloseWatch:
		s.closeWatch()
	case List:
		return s.list(ctx), false
	case Deliver:
		select {
		case s.rw.result <- e.Event:
			s.rw.stats.delivered.Add(1)
		case <-ctx.Done():
			return Stop{}, false
		}
	case Drop:
		switch e.Reason {
		case DropStale:
			s.rw.stats.stale.Add(1)
		case DropMalformed:
			// A server bug, worth seeing at the default verbosity: once per
			// watch (so at the backoff's pace at most), the rest at V(2).
			s.rw.stats.malformed.Add(1)
			if !s.malformedLogged {
				s.malformedLogged = true
				s.log.Info("ignored a bookmark with a malformed resource version", "event", describeEvent(e.Event),
					"lastResourceVersion", s.m.ResourceVersion())
				return nil, false
			}
		}
		s.log.V(2).Info("dropped event", "event", describeEvent(e.Event), "reason", e.Reason, "lastResourceVersion", s.m.ResourceVersion())
	case Wait:
		// The timer is armed by next, from the machine's Deadline.
		s.rw.stats.retry(e.Reason)
		s.log.V(2).Info("backing off before retry", "delay", e.For, "reason", e.Reason, "resourceVersion", s.m.ResourceVersion())
	case Finish:
		if e.Err != nil {
			s.log.Error(e.Err, "retrywatcher stopped", "resourceVersion", s.m.ResourceVersion())
			s.rw.errMu.Lock()
			s.rw.err = e.Err
			s.rw.errMu.Unlock()
		}
		return nil, true
	}
	return nil, false
}

func (s *shell) open(ctx context.Context, rv string) Input {
	s.rw.stats.watches.Add(1)
	w, err := s.opts.Watcher.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	if ctx.Err() != nil {
		if w != nil {
			w.Stop()
		}
		return Stop{}
	}
	if err == nil && w == nil {
		err = errNilWatch
	}
	if err != nil {
		s.log.V(2).Info("watch failed", "resourceVersion", rv, "err", err)
		return WatchFailed{Err: err}
	}
	s.w = w
	s.openedAt, s.malformedLogged = s.opts.Clock.Now(), false
	return WatchOpened{}
}

func (s *shell) list(ctx context.Context) Input {
	s.rw.stats.lists.Add(1)
	obj, err := s.opts.Lister.ListWithContext(ctx, metav1.ListOptions{})
	if ctx.Err() != nil {
		return Stop{}
	}
	if err != nil {
		s.log.V(2).Info("list failed", "err", err)
		return ListFailed{Err: err}
	}
	items, rv, err := listItems(obj)
	if err != nil {
		return ListFailed{Err: err}
	}
	s.log.V(2).Info("relisted", "items", len(items), "resourceVersion", rv)
	return Listed{Items: items, ResourceVersion: rv}
}

func (s *shell) closeWatch() {
	if s.w != nil {
		s.w.Stop()
		s.w = nil
	}
}
