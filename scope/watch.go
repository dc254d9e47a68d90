package scope

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// WatchWithContext watches the scope of the cache: of the list the
// reflector took (a watch from the resource version of the last list
// served shows it took that one). One namespace is watched in it; several,
// or all, with one cluster-wide watch, filtered here to the scope's
// namespaces.
func (s *Source) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	sc, again := s.watchScope(ctx.Err() == nil, opts.ResourceVersion)
	if again != nil {
		again()
	}
	ns := ""
	if len(sc.Namespaces) == 1 {
		ns = sc.Namespaces[0]
	}
	opts.LabelSelector, opts.FieldSelector = sc.LabelSelector, sc.FieldSelector
	inner, err := s.inner(ns).WatchWithContext(ctx, opts)
	if err != nil || len(sc.Namespaces) < 2 {
		return inner, err
	}
	w := &nsWatch{inner: inner, namespaces: make(map[string]struct{}, len(sc.Namespaces)), out: make(chan watch.Event), stop: make(chan struct{})}
	for _, ns := range sc.Namespaces {
		w.namespaces[ns] = struct{}{}
	}
	go w.run()
	return w, nil
}

// watchScope returns the scope a watch from resource version rv serves,
// taking the last list served when rv is its (live: the reflector has not
// abandoned the watch); again, when set, is a relist to make for a change
// asked for while that list was served.
func (s *Source) watchScope(live bool, rv string) (Scope, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.st
	if c := st.served; live && c != nil && rv == c.rv {
		st.served = nil
		if !c.scope.Equal(st.held) {
			s.stats.changes.Add(1)
			st.lastErr = nil
		}
		st.held = c.scope
		s.settleLocked(c.gen, nil)
		if st.gen > st.settled && st.relist != nil {
			st.local = true
			return st.held, st.relist
		}
	}
	return st.held, nil
}

// nsWatch passes on the events of a cluster-wide watch whose objects are
// in the scope's namespaces (bookmarks and errors always), until stopped
// or the inner watch ends.
type nsWatch struct {
	inner watch.Interface
	// namespaces are the scope's; never changed.
	namespaces map[string]struct{}
	out        chan watch.Event
	// stop is closed by Stop; once guards it.
	stop chan struct{}
	once sync.Once
}

func (w *nsWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *nsWatch) Stop() { w.once.Do(func() { close(w.stop) }) }

func (w *nsWatch) run() {
	defer close(w.out)
	defer w.inner.Stop()
	in := w.inner.ResultChan()
	for {
		var ev watch.Event
		select {
		case <-w.stop:
			return
		case e, ok := <-in:
			if !ok {
				return
			}
			ev = e
		}
		switch ev.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			if o, err := meta.Accessor(ev.Object); err == nil {
				if _, in := w.namespaces[o.GetNamespace()]; !in {
					continue
				}
			}
		}
		select {
		case w.out <- ev:
		case <-w.stop:
			return
		}
	}
}
