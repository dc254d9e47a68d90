// Package ondemand caches every object's metadata and holds whole objects
// only for the objects a program reads: the cache for a resource of which
// a program reads a few objects but must know of all, such as the Secrets
// an operator's custom resources reference among the thousands of Helm
// releases and tokens it never reads.
//
// A [Cache] sits beside a metadata-only informer (an
// informer.Informer[*metav1.PartialObjectMetadata], e.g. from
// factory.Metadata): that informer lists and watches every object's
// metadata, and its lists, indexes, handlers, WaitForSync and barriers
// work as for any informer. [Cache.Get] returns a whole object: the held
// one when it is at least as new as the metadata cached for it, else one
// fetched from the server (one GET, shared by concurrent reads of the same
// key), which is then held. An object whose metadata moves past the held
// version goes back to metadata only, and its next read fetches the new
// version: a read never returns a whole object older than the metadata
// the cache holds for it, and a read of an object that has not changed
// costs no request. Held objects not read for [Options.IdleAfter], or the
// least recently read when their bytes pass [Options.Budget], go back to
// metadata only; [Options.Hold] holds a label-selected few from the start.
//
// What is handed out whole is whole: [Cache.Get] and [Cache.List] return
// whole objects or an error, and handlers, registered on the metadata
// informer, get metadata.
//
// # Usage
//
//	meta, _ := factory.Metadata(f, metaClient, corev1.SchemeGroupVersion.WithResource("secrets"),
//		factory.Selection{}, informer.Options[*metav1.PartialObjectMetadata]{})
//	secrets, _ := ondemand.New(ctx, ondemand.Options[*corev1.Secret]{
//		Resource: corev1.Resource("secrets"),
//		Metadata: ondemand.MetadataOf(meta),
//		Fetcher: ondemand.FromClient(func(ns string) ondemand.Client[*corev1.Secret, *corev1.SecretList] {
//			return clientset.CoreV1().Secrets(ns)
//		}),
//		Budget:    64 << 20,
//		IdleAfter: 10 * time.Minute,
//		Transform: informer.StripManagedFields[*corev1.Secret],
//	})
//	f.Start(ctx)
//	go secrets.Run(ctx)
//	// in a reconcile:
//	s, err := secrets.Get(ctx, ns, name) // whole; fetched on the first read
//
// # Concurrency
//
// A Cache is safe for concurrent use. A read of a held object takes a
// read lock and stamps the object atomically, so reads do not serialise;
// fetches of different keys run concurrently. Run's goroutine demotes idle
// objects and fetches Hold's; the metadata informer's handler demotes
// changed and deleted ones.
//
// # Testing
//
// The tests run a Cache over fake.Server served through fake/fakeapi, so
// that its fetches are real REST calls: a differential test of random
// writes and reads against a plain cache of whole objects (every read
// equal to or newer than the plain cache's, never older than the
// metadata), every fault of a fetch (403, 404, 429, 500, timeouts), a
// server answering older versions, the budget and idle demotion with a
// fake clock, and an account of bytes against the heap.
package ondemand
