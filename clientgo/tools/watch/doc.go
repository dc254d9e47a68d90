// Package watch is k8s.io/client-go/tools/watch on listwatch's
// RetryWatcher (package retrywatcher): client-go code switches by changing
// the import path's prefix from k8s.io/client-go/ to
// github.com/listwatch/listwatch/clientgo/.
//
// NewRetryWatcherWithContext, Until and UntilWithSync are listwatch's;
// every other identifier is client-go's own, re-exported
// (zz_generated.reexport.go). Where they differ from client-go on purpose
// (a 410 on the watch call ends a RetryWatcher instead of being retried for
// ever; UntilWithSync coalesces no intermediate event): package
// retrywatcher, "Differences from client-go".
//
// # Usage
//
//	import watchtools "github.com/listwatch/listwatch/clientgo/tools/watch" // was k8s.io/client-go/tools/watch
//
//	ev, err := watchtools.UntilWithSync(ctx, lw, &corev1.Pod{}, nil, podReady)
//
// # Concurrency
//
// As client-go's.
//
// # Testing
//
// The tests run Until and UntilWithSync against fake.Server under
// testing/synctest, across watch cuts; make peer runs client-go's own
// RetryWatcher and UntilWithSync tests against this package.
package watch
