// Package metadatainformer is client-go's [k8s.io/client-go/metadata/metadatainformer]
// (the shared informer factory of the metadata client, caching only object
// metadata) on listwatch's engine: code written for client-go's package
// compiles unchanged when its import path k8s.io/client-go/metadata/metadatainformer
// becomes github.com/listwatch/listwatch/clientgo/metadata/metadatainformer,
// and its informers are listwatch's.
//
// The constructors and WithTransform are listwatch's: each informer is the
// drop-in of clientgo/tools/cache (handlers called in order, tombstones,
// client-go's indexer interface) with the factory's namespace, tweak and
// transform and a namespace index; its lister is client-go's
// metadatalister over its cache. Given the client metadata.NewForConfig
// (or NewForConfigAndClient) returns, the informers list and watch with
// restsource through that client's own REST client (same server,
// transport, credentials and rate limiter), asking for the same
// PartialObjectMetadata in protobuf, and decode with the factory's
// MemoryOptions (DefaultMemoryOptions unless WithMemoryOptions says
// otherwise: managedFields stripped while decoding, the strings, label
// and annotation maps and owner references that repeat shared). The
// transform then runs once on each decoded object: nothing is decoded
// twice. Any other metadata.Interface (client-go's fake, a wrapper)
// cannot be seen into: its informers list and watch through it, with
// client-go's decoding, and the constructor says so in one log line.
// The cached objects equal client-go's (after the same transform; the
// managedFields apart when stripped). The other names of the package are
// client-go's, re-exported by zz_generated.reexport.go (its header lists
// which are listwatch's).
//
// Options must be this package's: client-go's SharedInformerOption is a
// function over client-go's own factory, which this package cannot read.
// This package's WithTransform is client-go's too (given to client-go's
// factory, it does what client-go's does); given client-go's own,
// NewSharedInformerFactoryWithOptions logs an error and returns client-go's
// factory with every option applied.
//
// # Usage
//
// Change the import path, nothing else:
//
//	import "github.com/listwatch/listwatch/clientgo/metadata/metadatainformer"
//
//	factory := metadatainformer.NewSharedInformerFactory(metadataClient, 10*time.Minute)
//	secrets := factory.ForResource(corev1.SchemeGroupVersion.WithResource("secrets"))
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
// The tests run the factory on client-go's fake metadata client, with this
// package's option and with client-go's; clientgo/internal/gvrfactory's
// TestRealAPIServer runs it beside client-go's factory on a real
// kube-apiserver and requires equal caches. hack/peer's client-go-rewritten
// suite (make peer) runs client-go's own tests of this package against it,
// with only their import paths rewritten; hack/peer/known-failures.txt
// lists the one that fails by a deliberate difference (a streaming list's
// end bookmark without a resource version). make clientgo-check (part of
// make lint) fails when the generated file is stale or the package lacks a
// name client-go exports.
package metadatainformer
