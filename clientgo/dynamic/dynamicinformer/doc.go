// Package dynamicinformer is client-go's [k8s.io/client-go/dynamic/dynamicinformer]
// (the shared informer factory of the dynamic client, caching unstructured
// objects) on listwatch's engine: code written for client-go's package
// compiles unchanged when its import path k8s.io/client-go/dynamic/dynamicinformer
// becomes github.com/listwatch/listwatch/clientgo/dynamic/dynamicinformer,
// and its informers are listwatch's.
//
// The constructors are listwatch's (NewDynamicSharedInformerFactory,
// NewFilteredDynamicSharedInformerFactory, NewFilteredDynamicInformer, and
// listwatch's own NewFilteredDynamicSharedInformerFactoryWithMemoryOptions):
// each informer is the drop-in of clientgo/tools/cache (handlers called in
// order, tombstones, client-go's indexer interface) with the factory's
// namespace and tweak and a namespace index; its lister is client-go's
// dynamiclister over its cache. Given the client dynamic.NewForConfig
// returns, the informers list and watch with restsource (JSON, as the
// dynamic client) through that client's own REST client, and decode with
// the memory options (DefaultMemoryOptions unless given: managedFields cut
// from the bytes before decoding, the keys and repeating strings of every
// object's maps interned); any kind of the resource's group version is
// taken, as by the dynamic client. Any other dynamic.Interface (client-go's
// fake, a wrapper) cannot be seen into: its informers list and watch
// through it, with client-go's decoding, and the constructor says so in
// one log line. A transform set with the informer's SetTransform runs once
// on each decoded object. The cached objects equal client-go's (the
// managedFields apart when stripped). The other names of the package are
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
