package retrywatcher

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// shell executes a Machine's effects: it owns the goroutine, the open watch
// and the timers, and feeds outcomes back to the machine.
type shell struct {
	rw   *RetryWatcher
	m    *Machine
	opts Options
	log  logr.Logger
	// w is the open watch, nil when none is open.
	w watch.Interface
	// openedAt is when w was opened.
	openedAt time.Time
	// malformedLogged is set once w's first malformed bookmark is logged.
	malformedLogged bool
}

func (s *shell) run(ctx context.Context) {
	defer close(s.rw.done)
	defer close(s.rw.result)
	defer s.closeWatch()
	queue := s.m.Start()
	for {
		for len(queue) > 0 {
			e := queue[0]
			queue = queue[1:]
			more, finished := s.exec(ctx, e)
			if finished {
				return
			}
			queue = append(queue, more...)
		}
		queue = s.receive(ctx)
	}
}

// receive waits for the next event of the open watch, or for the end.
func (s *shell) receive(ctx context.Context) []Effect {
	if s.w == nil {
		// Only reachable if the machine emitted nothing while not watching,
		// which would be a bug; stop rather than spin.
		s.log.Error(nil, "no open watch and nothing to do; stopping", "phase", s.m.Phase())
		return s.m.Stop()
	}
	select {
	case <-ctx.Done():
		return s.m.Stop()
	case ev, ok := <-s.w.ResultChan():
		if !ok {
			lasted := s.opts.Clock.Since(s.openedAt)
			s.log.V(4).Info("watch closed", "resourceVersion", s.m.ResourceVersion(), "lasted", lasted)
			s.closeWatch()
			return s.m.StreamClosed(lasted)
		}
		return s.m.Event(ev)
	}
}

// exec runs one effect, returning the machine's reaction and whether the
// shell is finished.
func (s *shell) exec(ctx context.Context, e Effect) ([]Effect, bool) {
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
			return s.m.Stop(), false
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
		s.rw.stats.retry(e.Reason)
		s.log.V(2).Info("backing off before retry", "delay", e.For, "reason", e.Reason, "resourceVersion", s.m.ResourceVersion())
		t := s.opts.Clock.NewTimer(e.For)
		select {
		case <-t.C():
			return s.m.Waited(), false
		case <-ctx.Done():
			t.Stop()
			return s.m.Stop(), false
		}
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

func (s *shell) open(ctx context.Context, rv string) []Effect {
	s.rw.stats.watches.Add(1)
	w, err := s.opts.Watcher.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	if ctx.Err() != nil {
		if w != nil {
			w.Stop()
		}
		return s.m.Stop()
	}
	if err == nil && w == nil {
		err = errNilWatch
	}
	if err != nil {
		s.log.V(2).Info("watch failed", "resourceVersion", rv, "err", err)
		return s.m.WatchFailed(err)
	}
	s.w = w
	s.openedAt, s.malformedLogged = s.opts.Clock.Now(), false
	return s.m.WatchOpened()
}

func (s *shell) list(ctx context.Context) []Effect {
	s.rw.stats.lists.Add(1)
	obj, err := s.opts.Lister.ListWithContext(ctx, metav1.ListOptions{})
	if ctx.Err() != nil {
		return s.m.Stop()
	}
	if err != nil {
		s.log.V(2).Info("list failed", "err", err)
		return s.m.ListFailed(err)
	}
	items, rv, err := listItems(obj)
	if err != nil {
		return s.m.ListFailed(err)
	}
	s.log.V(2).Info("relisted", "items", len(items), "resourceVersion", rv)
	return s.m.Listed(items, rv)
}

func (s *shell) closeWatch() {
	if s.w != nil {
		s.w.Stop()
		s.w = nil
	}
}
