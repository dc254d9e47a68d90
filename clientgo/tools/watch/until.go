package watch

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/listwatch/listwatch/internal/listobj"
	"github.com/listwatch/listwatch/retrywatcher"
)

// ConditionFunc and PreconditionFunc are client-go's, so conditions written
// for tools/watch work unchanged.
type (
	ConditionFunc    = watchtools.ConditionFunc
	PreconditionFunc = watchtools.PreconditionFunc
)

// ErrWatchClosed is client-go's error for a watch that closed before every
// condition was met.
var ErrWatchClosed = watchtools.ErrWatchClosed

// RetryWatcher is listwatch's (package retrywatcher), which
// NewRetryWatcherWithContext returns: code that names client-go's concrete
// *watch.RetryWatcher keeps compiling.
type RetryWatcher = retrywatcher.RetryWatcher

// NewRetryWatcherWithContext is client-go's
// tools/watch.NewRetryWatcherWithContext on listwatch's RetryWatcher: it
// watches from initialResourceVersion, which must be a positive decimal
// integer (not "" or "0", which client-go refuses too, nor anything
// kube-apiserver would refuse to watch from). Differences from client-go:
// see package retrywatcher ("Differences from client-go").
func NewRetryWatcherWithContext(ctx context.Context, initialResourceVersion string, w cache.WatcherWithContext) (*RetryWatcher, error) {
	return retrywatcher.New(ctx, retrywatcher.Options{ResourceVersion: initialResourceVersion, Watcher: w})
}

// NewRetryWatcher is client-go's deprecated tools/watch.NewRetryWatcher on
// listwatch's RetryWatcher: NewRetryWatcherWithContext without a context,
// so that only Stop ends it. It returns listwatch's RetryWatcher, which
// the name RetryWatcher means in this package, as NewRetryWatcherWithContext
// does (a re-export would hand client-go's to code that names this one).
//
// Deprecated: as client-go's, use NewRetryWatcherWithContext.
func NewRetryWatcher(initialResourceVersion string, watcherClient cache.Watcher) (*RetryWatcher, error) {
	return NewRetryWatcherWithContext(context.Background(), initialResourceVersion, cache.ToWatcherWithContext(watcherClient))
}

// Until watches from initialResourceVersion through a RetryWatcher until each
// condition in turn is met, and returns the last event seen. It survives
// disconnects but not a 410 Gone, which ends it with an error: use
// UntilWithSync to recover from that too.
func Until(ctx context.Context, initialResourceVersion string, watcherClient cache.Watcher, conditions ...ConditionFunc) (*watch.Event, error) {
	rw, err := NewRetryWatcherWithContext(ctx, initialResourceVersion, cache.ToWatcherWithContext(watcherClient))
	if err != nil {
		return nil, err
	}
	defer func() { rw.Stop(); <-rw.Done() }()
	return until(ctx, nil, rw.ResultChan(), conditions)
}

// UntilWithSync lists lw, checks precondition against the listed objects, and
// then reads events — ADDED for every listed object first, then everything
// that happens — until each condition in turn is met. A 410 Gone is recovered
// by relisting and delivering the differences, so no change goes unseen.
// Unlike client-go's, no intermediate event is coalesced away.
//
// When ctx ends before the list answers, it returns as client-go's does:
// "unable to sync caches" with a precondition, wait.ErrorInterrupted without
// one. A list that ignores its context is then left running.
func UntilWithSync(ctx context.Context, lw cache.ListerWatcher, objType runtime.Object, precondition PreconditionFunc, conditions ...ConditionFunc) (*watch.Event, error) {
	lwc := cache.ToListerWatcherWithContext(lw)
	list, err := listOrDone(ctx, lwc, precondition != nil)
	if err != nil {
		return nil, err
	}
	items, rv, err := listobj.Items(list)
	if err != nil {
		return nil, err
	}
	if precondition != nil {
		st := cache.NewStore(cache.MetaNamespaceKeyFunc)
		for _, it := range items {
			if err := st.Add(it); err != nil {
				return nil, fmt.Errorf("UntilWithSync: %w", err)
			}
		}
		if done, err := precondition(st); err != nil || done {
			return nil, err
		}
	}
	rw, err := retrywatcher.New(ctx, retrywatcher.Options{ResourceVersion: rv, Watcher: lwc, Lister: lwc, Known: items})
	if err != nil {
		return nil, err
	}
	defer func() { rw.Stop(); <-rw.Done() }()
	initial := make([]watch.Event, len(items))
	for i, it := range items {
		initial[i] = watch.Event{Type: watch.Added, Object: it}
	}
	_ = objType // the list's own type is used; kept for client-go's signature
	return until(ctx, initial, rw.ResultChan(), conditions)
}

// listOrDone lists, or gives up when ctx ends first, with client-go's
// errors for that case.
func listOrDone(ctx context.Context, lw cache.ListerWatcherWithContext, precondition bool) (runtime.Object, error) {
	type result struct {
		obj runtime.Object
		err error
	}
	res := make(chan result, 1) // the list may answer after we gave up
	go func() {
		obj, err := lw.ListWithContext(ctx, metav1.ListOptions{})
		res <- result{obj, err}
	}()
	select {
	case r := <-res:
		if r.err != nil {
			return nil, fmt.Errorf("UntilWithSync: initial list: %w", r.err)
		}
		return r.obj, nil
	case <-ctx.Done():
		if precondition {
			return nil, fmt.Errorf("UntilWithSync: unable to sync caches: %w", ctx.Err())
		}
		return nil, wait.ErrorInterrupted(nil)
	}
}

// until applies conditions in turn to the events of initial and then ch,
// with client-go's UntilWithoutRetry semantics: a met condition is checked
// against the next one before more events are read.
func until(ctx context.Context, initial []watch.Event, ch <-chan watch.Event, conditions []ConditionFunc) (*watch.Event, error) {
	var last *watch.Event
	next := func() error {
		if len(initial) > 0 {
			ev := initial[0]
			initial = initial[1:]
			last = &ev
			return nil
		}
		select {
		case ev, ok := <-ch:
			if !ok {
				return ErrWatchClosed
			}
			last = &ev
			return nil
		case <-ctx.Done():
			return wait.ErrorInterrupted(nil)
		}
	}
	for _, cond := range conditions {
		if last != nil {
			done, err := cond(*last)
			if err != nil {
				return last, err
			}
			if done {
				continue
			}
		}
		for {
			if err := next(); err != nil {
				return last, err
			}
			done, err := cond(*last)
			if err != nil {
				return last, err
			}
			if done {
				break
			}
		}
	}
	return last, nil
}
