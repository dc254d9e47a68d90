// Package crcache is a controller-runtime cache built on listwatch end to
// end: a cache.NewCacheFunc for manager.Options.NewCache.
//
// # Usage
//
// One line in the manager's options:
//
//	mgr, err := ctrl.NewManager(cfg, manager.Options{NewCache: crcache.New})
//
// Everything else stays controller-runtime's: cache.Options (namespaces,
// selectors, transforms, ByObject, SyncPeriod, ...), the client, the
// builder, IndexField. The cache is controller-runtime's own (cache.New),
// with every informer listwatch's drop-in (clientgo/tools/cache's
// NewSharedIndexInformer). For the built-in types of client-go's scheme
// (Pods, ConfigMaps, Deployments, ...) the informer does not list and
// watch through the ListWatch controller-runtime hands it: it decodes
// with restsource (protobuf, decode-time stripping and interning) and the
// memory options of [Options.Memory], by default managedFields stripped
// while decoding, one bounded Interner per cache and shared
// ResourceLists. Other objects (custom resources' types, unstructured and
// metadata-only objects) are listed and watched through controller-
// runtime's clients, on listwatch's informer, with managedFields stripped
// by a transform that runs before the user's. [NewWithOptions] sets the
// options:
//
//	newCache := crcache.NewWithOptions(crcache.Options{
//		Memory: &informers.MemoryOptions{}, // keep managedFields, no interning
//	})
//	mgr, err := ctrl.NewManager(cfg, manager.Options{NewCache: newCache})
//
// controller-runtime's ListWatch hides its namespace and selectors in
// closures. The cache learns them by a probe: its clients' HTTP client
// has a transport that recognises a context value set by the cache, and
// for such a request records the URL (path with the namespace, query
// with the label and field selectors) and fails it without sending
// anything. The informer's restsource Source then requests that same
// path and query. If the probe cannot learn them (the ListWatch does not
// go through the cache's HTTP client, or sends parameters restsource
// cannot repeat), the informer uses the ListWatch itself and the cache
// logs why on [Options.Logger].
//
// [Options.MetricsRegisterer] exports every informer of the cache to
// Prometheus (informer/promprovider), e.g. on controller-runtime's
// metrics.Registry, which the manager's metrics server serves:
//
//	crcache.NewWithOptions(crcache.Options{MetricsRegisterer: metrics.Registry})
//
// cache.Options.NewInformer, if set, builds the informers instead of
// listwatch's constructor (over the restsource Source where the cache
// uses one, so they decode as listwatch's do); use [Options.OnNewInformer]
// to see the informers built.
//
// # Concurrency
//
// The cache is controller-runtime's, and as safe for concurrent use. The
// probe runs while controller-runtime builds an informer (under its lock)
// and sends nothing. Cached objects may share strings and resource maps
// through the Interner: treat them as read-only (controller-runtime's
// reader hands out deep copies unless UnsafeDisableDeepCopy is set).
//
// # Testing
//
// The tests run a manager's cache against fake.Server served over HTTP
// (internal/fakehttp): Get and List of typed, unstructured and metadata-
// only objects equal the server's, namespaces, label and field selectors,
// IndexField lookups, managedFields stripped by default and kept when
// opted out, and which informers decode with restsource. TestRealAPIServer
// does the same through a real kube-apiserver's TLS and token
// authentication (internal/testapiserver; skipped under -short). The peer
// suite controller-runtime-crcache (make peer) runs controller-runtime's
// own pkg/cache specs with cache.New replaced by New against a real
// kube-apiserver; hack/peer/known-failures.txt lists the specs that fail
// and why (they expect managedFields in the cache).
//
//	go test -race ./crcache/
package crcache
