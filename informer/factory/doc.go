// Package factory hands out informers shared by object type, resource and
// selection, starts them together, waits for them to sync and reports
// them: listwatch's counterpart of client-go's informer factories, built
// on the public API of package informer only.
//
// # Usage
//
//	f := factory.New(factory.Options{ResyncPeriod: 10 * time.Hour})
//	pods, err := factory.Typed[*corev1.Pod, *corev1.PodList](f, "v1/pods", factory.Selection{},
//		func(ns string) reflector.Client[*corev1.PodList] { return cs.CoreV1().Pods(ns) },
//		informer.Options[*corev1.Pod]{Transform: informer.StripManagedFields[*corev1.Pod]})
//	anything, err := factory.Dynamic(f, dyn, gvr, factory.Selection{Namespace: "team-a"}, informer.Options[*unstructured.Unstructured]{})
//	lean, err := factory.Metadata(f, meta, gvr, factory.Selection{}, informer.Options[*metav1.PartialObjectMetadata]{})
//	f.Start(ctx)
//	if err := f.WaitForCacheSync(ctx); err != nil {
//		return err // names each informer that did not sync, and why
//	}
//
// For is the general form: any source, any object type. Asking twice for
// the same type, resource and Selection gives the same informer.
// Options.WrapSource wraps every informer's source (to shard a resource
// over replicas: shard.Source), and a wrapped source that implements
// RelistHook is given its informer's Relist. Observe attaches metrics to
// every informer built without its own (informer/promprovider does), and
// Snapshots reports them all (informer/statuspage serves them).
//
// [Lifecycle] is the one lifecycle of a factory's informers (built once
// per key, started once, awaited, shut down): Factory runs it, and so do
// the client-go door's factories (clientgo/informers, and the dynamic and
// metadata-only ones), with client-go's choices where they differ.
//
// # Concurrency
//
// A Factory is safe for concurrent use. Start runs each informer on its own
// goroutines until the context ends or Shutdown, which waits for them.
//
// # Testing
//
// The tests run factories against fake.Server under testing/synctest:
// sharing, start and wait (with the reasons of a failed sync), a wrapped
// source relisting its informer, snapshots, and the metrics switch
// (allocation-free, attachable at any time).
package factory
