package informers

import (
	"context"
	"errors"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/internal/nilcheck"
	"github.com/listwatch/listwatch/restsource"
	"github.com/listwatch/listwatch/scope"
	"github.com/listwatch/listwatch/store"
)

// WithLiveScope makes the namespace and the label and field selectors of
// the factory's informers of namespaced built-in types changeable while
// they run, with [SetScope]. They start at the factory's: WithNamespace's
// namespace (or every namespace), and the selectors WithTweakListOptions's
// function sets on empty list options; the function still edits every
// list and watch, but the selectors are the scope's from then on. Each
// informer is a scope.Source's (package scope): a change lists only what
// the new scope gains and drops what it loses from the cache without a
// request. Informers of cluster-scoped types, those built by a custom
// NewInformerFunc and those held on read (WithOnRead) keep the factory's
// options. It is listwatch's own option: given to client-go's factory, it
// does nothing.
//
//	f := informers.NewSharedInformerFactoryWithOptions(client, resync,
//		informers.WithNamespace("team-a"), informers.WithLiveScope())
//	...
//	err := informers.SetScope(ctx, f, scope.Scope{Namespaces: []string{"team-a", "team-b"}})
func WithLiveScope() SharedInformerOption {
	return option(nil, func(s *settings) { s.liveScope = true })
}

// SetScope changes the scope (namespaces, label and field selectors) of
// the informers of namespaced built-in types of factory, built with
// WithLiveScope, while they run, and of those it builds later; a scope of
// no namespaces holds every namespace. It returns once every started
// informer holds the new scope, or with the errors of those that could
// not: an invalid namespace or selector is refused before any request and
// changes nothing; a scope the server refuses (403 in a namespace the
// user may not list) leaves that informer with its old scope whole. Each
// informer lists only what it gains (one list per namespace gained; the
// new scope once when the selectors change) and drops what it loses
// without a request: its handlers hear OnAdd for each object gained,
// OnDelete with the object (not a DeletedFinalStateUnknown) for each
// object lost, nothing for the others; registrations, indexers and the
// controllers' queues stay. See scope.Source and docs/operations.md,
// "Changing scope at run time".
func SetScope(ctx context.Context, factory SharedInformerFactory, sc scope.Scope) error {
	f, ok := factory.(*sharedInformerFactory)
	if !ok || f.live == nil {
		return fmt.Errorf("informers: SetScope: the factory (%T) was not built with WithLiveScope", factory)
	}
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("informers: SetScope: %w", err)
	}
	l := f.live
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
		return fmt.Errorf("informers: SetScope: %w", err)
	}
	return nil
}

// ScopeOf returns the scope last given to factory (WithLiveScope's start,
// or the last SetScope's), and false for a factory without a live scope.
func ScopeOf(factory SharedInformerFactory) (scope.Scope, bool) {
	f, ok := factory.(*sharedInformerFactory)
	if !ok || f.live == nil {
		return scope.Scope{}, false
	}
	f.live.mu.Lock()
	defer f.live.mu.Unlock()
	return f.live.scope, true
}

// liveScope is a factory's live scope: the scope.Sources of its informers
// of namespaced built-in types, all at the same scope.
type liveScope struct {
	// tweak is the factory's tweak, leaving the selectors as the source
	// set them; nil without one.
	tweak internalinterfaces.TweakListOptionsFunc

	// mu guards scope and sources.
	mu      sync.Mutex
	scope   scope.Scope
	sources []*scope.Source
}

// newLiveScope returns the live scope of a factory with settings s, nil
// when s does not ask for one or its namespace or selectors are invalid
// (logged: the factory then keeps its options).
func newLiveScope(s settings) *liveScope {
	if !s.liveScope {
		return nil
	}
	sc := scope.Scope{}
	if s.namespace != metav1.NamespaceAll {
		sc.Namespaces = []string{s.namespace}
	}
	l := &liveScope{}
	if t := s.tweakListOptions; t != nil {
		var o metav1.ListOptions
		t(&o)
		sc.LabelSelector, sc.FieldSelector = o.LabelSelector, o.FieldSelector
		l.tweak = func(o *metav1.ListOptions) {
			ls, fs := o.LabelSelector, o.FieldSelector
			t(o)
			o.LabelSelector, o.FieldSelector = ls, fs
		}
	}
	if err := sc.Validate(); err != nil {
		klog.Background().Error(err, "informers: WithLiveScope: the factory's namespace and list options are not a scope; its informers keep them")
		return nil
	}
	l.scope = sc
	return l
}

// liveInformer builds the informer of b's type (namespaced) over a
// scope.Source of the factory's live scope, or returns nil when the
// clientset has no REST client (client-go's fake: its informer keeps the
// factory's options).
func (f *sharedInformerFactory) liveInformer(b *builtin, obj runtime.Object, opts cache.SharedIndexInformerOptions) (cache.SharedIndexInformer, error) {
	rc := b.restClient(f.client)
	if nilcheck.Is(rc) {
		return nil, nil
	}
	l := f.live
	var mu sync.Mutex
	made := map[string]cache.ListerWatcherWithContext{}
	inner := func(ns string) cache.ListerWatcherWithContext {
		mu.Lock()
		defer mu.Unlock()
		if lw, ok := made[ns]; ok {
			return lw
		}
		lw, err := b.typ.New(f.memory.Source(restsource.Options{Client: rc, Resource: b.gvr.Resource, Namespace: ns, TweakListOptions: l.tweak}))
		if err != nil {
			return failingLW{err}
		}
		made[ns] = cache.ToListerWatcherWithContext(lw)
		return made[ns]
	}
	l.mu.Lock()
	sc := l.scope
	l.mu.Unlock()
	ss, err := scope.NewSource(context.Background(), scope.SourceOptions{Inner: inner, Scope: sc}) //lint:allow-background the factory's informers have no context until Run
	if err != nil {
		return nil, err
	}
	inf := lwcache.NewSharedIndexInformerWithOptions(scopeLW{ss}, obj, opts)
	u, ok := inf.(interface {
		Informer() *informer.Informer[store.Object]
	})
	if !ok {
		return nil, fmt.Errorf("informers: the drop-in informer %T does not expose listwatch's", inf)
	}
	scope.Attach(ss, u.Informer())
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sources = append(l.sources, ss)
	if !ss.Scope().Equal(l.scope) {
		_ = ss.Update(context.Background(), l.scope) //lint:allow-background before its first list: sets the scope it lists
	}
	return inf, nil
}

// scopeLW is a scope.Source as a cache.ListerWatcher (informers take
// one); reflectors call its context methods.
type scopeLW struct{ *scope.Source }

func (l scopeLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts) //lint:allow-background client-go's List has no context
}

func (l scopeLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts) //lint:allow-background client-go's Watch has no context
}

// failingLW fails every call with err.
type failingLW struct{ err error }

func (f failingLW) ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return nil, f.err
}

func (f failingLW) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, f.err
}
