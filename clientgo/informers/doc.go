// Package informers is client-go's [k8s.io/client-go/informers] (the shared
// informer factory of the built-in resources) on listwatch's engine: code
// written for client-go's package compiles unchanged when its import path
// k8s.io/client-go/informers becomes
// github.com/listwatch/listwatch/clientgo/informers, and its informers are
// listwatch's, decoding with package restsource and its memory options.
//
// The factory is listwatch's (NewSharedInformerFactory,
// NewSharedInformerFactoryWithOptions, NewFilteredSharedInformerFactory),
// and so are the options (WithNamespace, WithTweakListOptions,
// WithTransform, WithCustomResyncConfig, WithInformerName, and listwatch's
// own WithMemoryOptions). Everything the factory hands out above its
// informers is client-go's own: its group accessors (Core(), Apps(), ...)
// call client-go's generated group constructors with this factory, so
// f.Core().V1().Pods() is client-go's PodInformer and its Lister() client-go's
// PodLister, over this factory's informer. The other names of the package
// are client-go's, re-exported by zz_generated.reexport.go (its header lists
// which are listwatch's).
//
// # What each informer is
//
// client-go's typed informers ask the factory for their informer with
// InformerFor(&corev1.Pod{}, newFunc), where newFunc is their own default
// (which would build client-go's informer over the clientset). The factory
// recognises that default and builds listwatch's informer instead (the
// drop-in of clientgo/tools/cache: handlers called in order, tombstones,
// client-go's indexer interface) with a namespace index, listing and
// watching through restsource over the clientset's REST client of the
// type's group version (clientset.CoreV1().RESTClient()), in protobuf, with
// the factory's namespace (not for cluster-scoped types), tweak and memory
// options. The table of built-in types (147 in client-go v0.37) is
// generated from client-go by hack/clientgo-informers, in two halves: the
// types with their restsource constructors (package restsource/builtin)
// and the factory's accessors (zz_generated.builtins.go).
//
// The memory options are on by default (DefaultMemoryOptions):
// metadata.managedFields are left out while decoding, repeated strings are
// interned in one bounded restsource.Interner per factory, and the parts
// that repeat across objects (labels, annotations, container specs,
// ResourceLists, ...) are decoded once and shared (ShareRepeated). A
// controller that reads managedFields from its listers, or modifies cached
// objects in place (which it must never do: listers hand out the cache's
// own objects, here as in client-go), turns them off:
//
//	informers.NewSharedInformerFactoryWithOptions(client, resync, informers.WithMemoryOptions(informers.MemoryOptions{}))
//
// The factory's transform (WithTransform) runs on every informer after
// decoding, as client-go's.
//
// A clientset without REST clients (client-go's fake clientset returns a
// nil one) is listed and watched through its typed clients instead, with
// the same namespace and tweak, and without streaming lists, as client-go's
// typed informers do: tests with fake clientsets keep working, on
// listwatch's engine.
//
// A newFunc of the caller's own (kube-scheduler passes one that selects the
// pods that are not terminal) is called as client-go calls it, with the
// clientset and the type's resync period, and the factory keeps what it
// returns (with the factory's transform set). What that informer is depends
// on the caller's code: built with this module's clientgo/tools/cache, it
// is listwatch's informer decoding with client-go's clientset; built with
// client-go's (say through client-go's NewFilteredPodInformer), it is
// client-go's. Neither has the memory options.
//
// Options must be this package's: client-go's SharedInformerOption is a
// function over client-go's own factory, which this package cannot read.
// This package's options are client-go's too (given to client-go's
// factory, they do what client-go's do, and WithMemoryOptions nothing);
// given one of client-go's own, the constructor logs an error and returns
// client-go's factory with every option applied.
//
// # Usage
//
// Change the import path, nothing else:
//
//	import "github.com/listwatch/listwatch/clientgo/informers"
//
//	factory := informers.NewSharedInformerFactory(clientset, 10*time.Minute)
//	pods := factory.Core().V1().Pods()
//	pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{...})
//	factory.StartWithContext(ctx)
//	factory.WaitForCacheSync(ctx.Done())
//	pod, err := pods.Lister().Pods("default").Get("web")
//
// Packages outside the covered ones (client-go's listers, typed informers,
// clientsets, tools/cache/synctrack...) keep their client-go import paths and
// work with this package's values, whose types are client-go's.
//
// # Concurrency
//
// As client-go's: the factory is safe for concurrent use; Start runs each
// informer on its own goroutines until the stop channel or context ends;
// Shutdown waits for them.
//
// # Testing
//
// The tests run the factory on client-go's fake clientset (listers,
// namespace and tweak, sharing, ForResource, a custom newFunc, the
// transform, sync results, options from either package) and on fake.Server
// served over HTTP (restsource, the memory options on and off), and build
// every entry of the generated table through client-go's typed informer.
// examples/samplecontroller runs one controller on a real kube-apiserver
// with client-go's imports and with this package's. make clientgo-check
// (part of make lint) fails when a generated file is stale or the package
// lacks a name client-go exports.
package informers
