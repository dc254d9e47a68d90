// Package gvrfactory is the shared informer factory keyed by resource that
// the drop-in dynamicinformer and metadatainformer factories both are:
// informers handed out by GroupVersionResource, started together, awaited
// together, shut down together, with client-go's semantics for each.
// Each informer lists and watches ([ListerWatcher]) with restsource over the client's own
// REST client ([RESTClientOf] reads it out of client-go's metadata and
// dynamic clients), or, for a client it cannot see into, over the client
// itself ([Source], which the typed drop-in factory uses too on a fake
// clientset).
//
// # Concurrency
//
// A Factory is safe for concurrent use. Start runs each informer on its
// own goroutines until the stop channel is closed; Shutdown waits for them.
//
// # Testing
//
// The tests drive a Factory over informers built on fake.Server: sharing,
// Start after Start and after Shutdown, and WaitForCacheSync with an
// informer that cannot sync. TestRESTClientOf pins what RESTClientOf reads
// of client-go's clients; TestRealAPIServer runs the metadata and dynamic
// drop-in factories beside client-go's on a real kube-apiserver and
// requires equal caches.
package gvrfactory

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/informer/factory"
	"github.com/listwatch/listwatch/internal/nilcheck"
)

// Factory hands out one informer per resource, built by its build
// function on first use.
type Factory struct {
	build func(schema.GroupVersionResource) informers.GenericInformer
	// informers holds every informer handed out, with client-go's
	// lifecycle: built after Shutdown too, never cancelled by it.
	informers factory.Lifecycle[schema.GroupVersionResource, informers.GenericInformer]
}

// New returns an empty factory whose informers build makes.
func New(build func(schema.GroupVersionResource) informers.GenericInformer) *Factory {
	return &Factory{build: build}
}

// ForResource returns the factory's informer for gvr, building it on first
// use.
func (f *Factory) ForResource(gvr schema.GroupVersionResource) informers.GenericInformer {
	inf, _ := f.informers.Get(gvr, func() (informers.GenericInformer, error) { return f.build(gvr), nil })
	return inf
}

// Start runs every informer not yet started until stopCh is closed; after
// Shutdown it starts nothing.
func (f *Factory) Start(stopCh <-chan struct{}) {
	f.informers.Start(wait.ContextForChannel(stopCh), func(ctx context.Context, inf informers.GenericInformer) {
		inf.Informer().RunWithContext(ctx)
	})
}

// WaitForCacheSync waits until every started informer has synced or
// stopCh is closed, and says which have. It checks each informer as
// client-go's factories do, with cache.WaitForCacheSync, which polls every
// 100 ms, rather than waking at the sync itself: the fake dynamic and
// metadata clients' watches see only what is written after they open, and
// the informer opens its watch just after the list that syncs it. A test
// that writes as soon as WaitForCacheSync returns (client-go's own do)
// relies on the poll to leave the watch time to open; woken at once, it
// loses the write about once in a hundred runs. With a real server the
// watch resumes from the list's resource version and nothing is lost
// either way.
func (f *Factory) WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool {
	started := f.informers.Started()
	res := make(map[schema.GroupVersionResource]bool, len(started))
	for gvr, inf := range started {
		res[gvr] = cache.WaitForCacheSync(stopCh, inf.Informer().HasSynced)
	}
	return res
}

// Shutdown makes Start start nothing more and waits until every started
// informer has returned (their stop channel must be closed). It may be
// called more than once, also concurrently.
func (f *Factory) Shutdown() { f.informers.Shutdown() }

// Source is lw with tweak applied to the options of every list and watch,
// and saying whether client supports streaming lists (client-go's fake
// clients do not), as client-go's generated informers build theirs over a
// typed, dynamic or metadata client.
func Source[F ~func(*metav1.ListOptions)](lw cache.ListerWatcherWithContext, tweak F, client any) cache.ListerWatcher {
	tweaked := func(o metav1.ListOptions) metav1.ListOptions {
		if tweak != nil {
			tweak(&o)
		}
		return o
	}
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return lw.ListWithContext(ctx, tweaked(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return lw.WatchWithContext(ctx, tweaked(o))
		},
	}, client)
}

// Generic is client-go's GenericInformer: an informer and the lister a
// package builds over its indexer (dynamiclister's or metadatalister's
// runtime-object shim).
type Generic struct {
	Inf       cache.SharedIndexInformer
	NewLister func(cache.Indexer) cache.GenericLister
}

// Informer implements informers.GenericInformer.
func (g *Generic) Informer() cache.SharedIndexInformer { return g.Inf }

// Lister implements informers.GenericInformer.
func (g *Generic) Lister() cache.GenericLister { return g.NewLister(g.Inf.GetIndexer()) }

// ListerWatcher returns what an informer lists and watches through: the
// Source restsource builds over rest, when rest is not nil; otherwise, or
// when restsource refuses (which it does only for options it validates,
// all set by the caller), through the client (viaClient), or [NoClient]
// when client is nil or a nil pointer.
func ListerWatcher(rest *REST, restsource func(*REST) (cache.ListerWatcher, error), client any, viaClient func() cache.ListerWatcher) cache.ListerWatcher {
	if rest != nil {
		src, err := restsource(rest)
		if err == nil {
			return WatchListOf(src, client)
		}
		klog.Background().Error(err, "building the restsource Source; the informer lists and watches through the client")
	}
	if nilcheck.Is(client) {
		return NoClient()
	}
	return viaClient()
}

// WatchListOf is lw, saying that it cannot serve streaming lists when
// client says so (client-go's optional IsWatchListSemanticsUnSupported,
// which client-go's fake clients and kube-controller-manager's test
// wrappers of real clients implement): a lister-watcher that talks to the
// client's server directly must honour what the client declares of that
// server, as client-go's informers over the client do.
func WatchListOf(lw cache.ListerWatcher, client any) cache.ListerWatcher {
	if !watchlist.DoesClientNotSupportWatchListSemantics(client) {
		return lw
	}
	lwc := cache.ToListerWatcherWithContext(lw)
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc:  lwc.ListWithContext,
		WatchFuncWithContext: lwc.WatchWithContext,
	}, client)
}
