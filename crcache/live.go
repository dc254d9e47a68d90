package crcache

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/scope"
	"github.com/listwatch/listwatch/store"
)

// LiveOptions makes the namespaces of a cache's informers changeable while
// it runs (Options.Live, SetNamespaces).
type LiveOptions struct {
	// Namespaces are the namespaces the informers of namespaced types
	// hold from the start; empty means every namespace. Leave
	// cache.Options.DefaultNamespaces empty: controller-runtime would
	// build one informer per namespace, which no call can change.
	Namespaces []string
}

// live is the live scope of one cache: the scope.Sources of its informers
// of namespaced types, all at the same namespaces.
type live struct {
	scheme     *runtime.Scheme
	namespaced func(example runtime.Object) (bool, error)
	log        logr.Logger
	// ctx carries log, for the sources.
	ctx context.Context

	// mu guards scope and sources.
	mu      sync.Mutex
	scope   scope.Scope
	sources []*scope.Source
}

// newLive checks o and returns the cache's live scope, with opts' scheme
// and mapper set.
func newLive(o LiveOptions, sharded bool, cfg *rest.Config, httpClient *http.Client, opts cache.Options, log logr.Logger) (*live, cache.Options, error) {
	if sharded {
		return nil, opts, errors.New("crcache: Options.Live and Options.Shard cannot be combined")
	}
	if len(opts.DefaultNamespaces) > 0 {
		return nil, opts, errors.New("crcache: Options.Live: leave cache.Options.DefaultNamespaces empty, LiveOptions.Namespaces are the namespaces")
	}
	sc := scope.Scope{Namespaces: o.Namespaces}
	if err := sc.Validate(); err != nil {
		return nil, opts, fmt.Errorf("crcache: Options.Live: %w", err)
	}
	opts, err := withTypes(cfg, httpClient, opts)
	if err != nil {
		return nil, opts, fmt.Errorf("crcache: Options.Live: %w", err)
	}
	l := &live{scheme: opts.Scheme, log: log.WithName("live"), scope: sc}
	mapper := opts.Mapper
	l.namespaced = func(example runtime.Object) (bool, error) {
		gvk, err := apiutil.GVKForObject(example, l.scheme)
		if err != nil {
			return false, err
		}
		return apiutil.IsGVKNamespaced(gvk, mapper)
	}
	l.ctx = klog.NewContext(context.Background(), l.log)
	return l, opts, nil
}

// source wraps src, the cluster-wide source of an informer of example's
// type (at), in a scope.Source over the same source in each namespace
// (inNamespace) when the type is namespaced; it returns src and nil
// otherwise. l may be nil (no live scope).
func (l *live) source(src toolscache.ListerWatcher, at where, example runtime.Object,
	inNamespace func(string) (toolscache.ListerWatcher, error)) (toolscache.ListerWatcher, *scope.Source) {
	if l == nil || at.namespace != "" {
		return src, nil
	}
	if namespaced, err := l.namespaced(example); err != nil || !namespaced {
		if err != nil {
			l.log.Error(err, "not scoping an informer: its type's scope is unknown", "type", fmt.Sprintf("%T", example))
		}
		return src, nil
	}
	var mu sync.Mutex
	made := map[string]toolscache.ListerWatcherWithContext{"": toolscache.ToListerWatcherWithContext(src)}
	inner := func(ns string) toolscache.ListerWatcherWithContext {
		mu.Lock()
		defer mu.Unlock()
		if lw, ok := made[ns]; ok {
			return lw
		}
		lw, err := inNamespace(ns)
		if err != nil {
			return failingLW{err}
		}
		made[ns] = toolscache.ToListerWatcherWithContext(lw)
		return made[ns]
	}
	l.mu.Lock()
	sc := l.scope
	l.mu.Unlock()
	ss, err := scope.NewSource(l.ctx, scope.SourceOptions{Inner: inner, Scope: sc})
	if err != nil {
		l.log.Error(err, "not scoping an informer", "type", fmt.Sprintf("%T", example))
		return src, nil
	}
	return scopeLW{ss}, ss
}

// attach ties ss to inf, its informer (listwatch's drop-in: any other
// cannot relist from its cache, and its scope cannot change), and
// registers it for SetNamespaces.
func (l *live) attach(ss *scope.Source, inf toolscache.SharedIndexInformer) {
	if ss == nil {
		return
	}
	u, ok := inf.(interface {
		Informer() *informer.Informer[store.Object]
	})
	if !ok {
		l.log.Info("an informer that is not listwatch's keeps its namespaces", "informer", fmt.Sprintf("%T", inf))
		return
	}
	scope.Attach(ss, u.Informer())
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sources = append(l.sources, ss)
	if !ss.Scope().Equal(l.scope) {
		_ = ss.Update(l.ctx, l.scope) // before its first list: sets the scope it lists
	}
}

// SetNamespaces changes the namespaces of the informers of namespaced
// types of c, a cache built with Options.Live, while it runs, and of those
// it builds later; none means every namespace. It returns once every
// informer holds them, or with the errors of those that could not: an
// invalid namespace name is refused before any request; a namespace the
// server refuses (403 where the user may not list) leaves that informer
// with its old namespaces whole. Each informer lists only the namespaces
// it gains (one list each) and drops the ones it loses without a request,
// its handlers hearing an add for each object gained and a delete (not a
// tombstone) for each object lost; its registrations, indexes and the
// controllers' queues stay. See scope.Source and docs/operations.md,
// "Changing scope at run time".
func SetNamespaces(ctx context.Context, c cache.Cache, namespaces ...string) error {
	if oc, ok := c.(*onReadCache); ok {
		c = oc.Cache
	}
	wc, ok := c.(*waitingCache)
	if !ok || wc.live == nil {
		return fmt.Errorf("crcache: SetNamespaces: the cache (%T) was not built with Options.Live", c)
	}
	l := wc.live
	sc := scope.Scope{Namespaces: namespaces}
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("crcache: SetNamespaces: %w", err)
	}
	l.mu.Lock()
	l.scope = sc
	sources := append([]*scope.Source(nil), l.sources...)
	l.mu.Unlock()
	errs := make([]error, len(sources))
	var wg sync.WaitGroup
	for i, ss := range sources {
		wg.Go(func() { errs[i] = ss.Update(ctx, sc) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("crcache: SetNamespaces: %w", err)
	}
	return nil
}

// scopeLW is a scope.Source as a cache.ListerWatcher (informers take
// one); reflectors call its context methods.
type scopeLW struct{ *scope.Source }

func (l scopeLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

func (l scopeLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// failingLW fails every call with err.
type failingLW struct{ err error }

func (f failingLW) ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return nil, f.err
}

func (f failingLW) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, f.err
}
