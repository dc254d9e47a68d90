// Package samplecontroller shows a controller written for client-go's
// shared informer factory running on listwatch by changing imports only.
//
// The controller (in the style of k8s.io/sample-controller, with a
// ConfigMap in place of a custom resource) keeps, for each ConfigMap
// labelled samplecontroller.listwatch.io/app=true, a Deployment named by
// its data, owned by it, with its replicas and image, and writes the
// Deployment's available replicas back onto the ConfigMap. It uses
// informers.NewSharedInformerFactoryWithOptions, the typed ConfigMap and
// Deployment listers, a rate-limited work queue of cache.ObjectName and
// event handlers with tombstones, as client-go controllers do.
//
// Two copies of it are compiled:
//
//   - clientgo: imports k8s.io/client-go/informers, k8s.io/client-go/tools/cache
//     and k8s.io/client-go/util/workqueue;
//   - listwatch: the same file with those three imports'
//     prefix k8s.io/client-go/ changed to github.com/listwatch/listwatch/clientgo/,
//     and nothing else: its informers are listwatch's, decoding with
//     restsource and its memory options, its queue is listwatch's.
//
// TestOnlyImportsDiffer requires the second to be the first with the
// imports rewritten (go test ./examples/samplecontroller -run
// TestOnlyImportsDiffer -update writes it).
//
// # Testing
//
// The Ginkgo suite runs the same specs on both copies, against a real
// kube-apiserver (internal/testing/testapiserver; skipped under -short) and against
// listwatch's in-memory apiserver served over REST (fake/fakeapi), in
// place of client-go's fake clientset: the Deployment is created, follows
// an edit of the ConfigMap, is put back when deleted, and its status
// reaches the ConfigMap. The fake apiserver gives UIDs, resource
// versions, conflicts, the status subresource and watches from a resource
// version as kube-apiserver does, where the fake clientset needed
// reactors for each (and a wait for its watches to open, since they
// start at the call, not at the list's resource version). One more spec
// is what no fake clientset can express: the server refuses the
// controller's first three creates with 500s, then compacts its history
// and closes every watch, so that the informers' next watch is 410
// Expired and they relist; the app still gets its Deployment and follows
// an edit.
package samplecontroller
