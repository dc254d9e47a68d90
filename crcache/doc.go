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
// NewSharedIndexInformer). The informer does not list and watch through
// the ListWatch controller-runtime hands it: it decodes with restsource,
// with the memory options of [Options.Memory] (by default managedFields
// stripped while decoding, one bounded Interner per cache, the parts that
// repeat across objects shared):
//
//   - built-in types of client-go's scheme (Pods, ConfigMaps,
//     Deployments, ...) in protobuf;
//   - metadata-only objects (metav1.PartialObjectMetadata, the builder's
//     OnlyMetadata) of any resource, custom ones included, in protobuf;
//   - unstructured objects in JSON, their map keys and repeating values
//     interned;
//   - custom resources' Go types listed in [Options.Types] ([TypeFor]) in
//     JSON. Go's generics need the type at compile time; a custom type
//     not listed is listed and watched through controller-runtime's
//     client, on listwatch's informer, with managedFields stripped by a
//     transform that runs before the user's (logged at V(1)).
//
// [NewWithOptions] sets the options:
//
//	newCache := crcache.NewWithOptions(crcache.Options{
//		Memory: &informers.MemoryOptions{}, // keep managedFields, no interning
//		Types:  []crcache.Type{crcache.TypeFor[*v1.Widget]()},
//	})
//	mgr, err := ctrl.NewManager(cfg, manager.Options{NewCache: newCache})
//
// Where controller-runtime waits for an informer to sync (GetInformer,
// and Get and List unless ReaderFailOnMissingInformer is set), the cache
// stops waiting when the informer's list has failed for a lasting reason
// (403 Forbidden, 401, 404) and returns the server's error, so that
// apierrors.IsForbidden(err) holds, instead of blocking until the context
// ends; the informer keeps retrying. A custom resource installed after the
// manager started is found by controller-runtime's lazy REST mapper on
// first use.
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
// and [Options.StatusPage] shows them on a page ([StatusPage]) that can be
// mounted on the same server.
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
