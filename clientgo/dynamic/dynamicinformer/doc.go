// Package dynamicinformer is client-go's [k8s.io/client-go/dynamic/dynamicinformer]
// (the shared informer factory of the dynamic client, caching unstructured
// objects) on listwatch's engine: code written for client-go's package
// compiles unchanged when its import path k8s.io/client-go/dynamic/dynamicinformer
// becomes github.com/listwatch/listwatch/clientgo/dynamic/dynamicinformer,
// and its informers are listwatch's.
//
// The constructors are listwatch's (NewDynamicSharedInformerFactory,
// NewFilteredDynamicSharedInformerFactory, NewFilteredDynamicInformer):
// each informer is the drop-in of clientgo/tools/cache (handlers called in
// order, tombstones, client-go's indexer interface) listing and watching
// through the dynamic client, as client-go's does, with the factory's
// namespace and tweak and a namespace index; its lister is client-go's
// dynamiclister over its cache. The objects are decoded by the dynamic
// client (restsource does not decode unstructured objects), so the memory
// options of clientgo/informers do not apply; a transform set with the
// informer's SetTransform does. The other names of the package are
// client-go's, re-exported by zz_generated.reexport.go (its header lists
// which are listwatch's).
//
// # Usage
//
// Change the import path, nothing else:
//
//	import "github.com/listwatch/listwatch/clientgo/dynamic/dynamicinformer"
//
//	factory := dynamicinformer.NewDynamicSharedInformerFactory(dynamicClient, 10*time.Minute)
//	deployments := factory.ForResource(appsv1.SchemeGroupVersion.WithResource("deployments"))
//	factory.Start(ctx.Done())
//	factory.WaitForCacheSync(ctx.Done())
//
// Packages outside the covered ones (client-go's listers, typed informers,
// clientsets, tools/cache/synctrack...) keep their client-go import paths and
// work with this package's values, whose types are client-go's.
//
// # Concurrency
//
// As client-go's: the factory is safe for concurrent use; Start runs each
// informer on its own goroutines until the stop channel is closed;
// Shutdown waits for them.
//
// # Testing
//
// The tests run the factory on client-go's fake dynamic client. hack/peer's
// client-go-rewritten suite (make peer) runs client-go's own tests of this
// package against it, with only their import paths rewritten;
// hack/peer/known-failures.txt lists the one that fails by a deliberate
// difference (a streaming list's end bookmark without a resource version).
// make clientgo-check (part of make lint) fails when the generated file is
// stale or the package lacks a name client-go exports.
package dynamicinformer
