// Package cache is k8s.io/client-go/tools/cache on listwatch's engines: code
// written against client-go switches by changing the import path's prefix
// from k8s.io/client-go/ to github.com/listwatch/listwatch/clientgo/, and
// nothing else.
//
// The constructors of the pieces listwatch replaces are listwatch's and
// return client-go's interfaces: NewSharedIndexInformer and
// NewSharedIndexInformerWithOptions (listwatch's informer, package
// informer), NewIndexer and NewStore (its store, package store),
// NewDeltaFIFOWithOptions and NewDeltaFIFO (its FIFO, package deltafifo),
// NewReflector, NewReflectorWithOptions, NewNamedReflector and
// NewNamespaceKeyedIndexerAndReflector (its List-then-Watch engine, package
// reflector, writing into any client-go store), New (a Controller running
// that reflector into any client-go Queue), NewInformer,
// NewInformerWithOptions, NewIndexerInformer, NewTransformingInformer and
// NewTransformingIndexerInformer (New over NewIndexer and
// NewDeltaFIFOWithOptions) and NewSharedInformer.
// Every other identifier of client-go's package is client-go's own,
// re-exported under the same name (zz_generated.reexport.go), so that the
// rest of a program compiles unchanged: types, constants, helpers such as
// MetaNamespaceKeyFunc, WaitForCacheSync and ResourceEventHandlerFuncs.
//
// # Usage
//
//	import "github.com/listwatch/listwatch/clientgo/tools/cache" // was k8s.io/client-go/tools/cache
//
//	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
//	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{...})
//	go inf.Run(stopCh)
//	cache.WaitForCacheSync(stopCh, inf.HasSynced)
//
// Each constructor's documentation lists where it deliberately differs
// from client-go (a handler panic never crashes the process, objects of the
// wrong type are dropped from lists too, ...). docs/migration.md has the
// table of what is covered.
//
// # Concurrency
//
// As client-go's: every informer, indexer and queue is safe for concurrent
// use; handlers of one informer are called one at a time per handler.
//
// # Testing
//
// The tests run each drop-in against client-go's own implementation on the
// same script and require the same transcript (handler calls, lister
// answers, queue contents); make peer also runs client-go's own tests of
// this package against it.
package cache
