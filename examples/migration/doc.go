// Package migration shows one small controller written twice: against
// client-go (clientgo.go) and against listwatch (listwatch.go). It keeps,
// for every node, the number of pods scheduled there.
//
// Step 1, one import: the client-go version takes its informer constructor
// as a parameter, and runs unchanged on listwatch's drop-in
// (informer.NewSharedIndexInformer returns a cache.SharedIndexInformer).
//
// Step 2, typed: compare the two files. What changes is the element type of
// every API (no obj.(*corev1.Pod), no cache.DeletedFinalStateUnknown to
// unwrap, ByIndex returns []*corev1.Pod), WaitForSync returning why it
// failed, and a single-valued index that allocates nothing.
package migration
