// Package fakeapi serves a fake.Server over kube-apiserver's REST API,
// in-process, so that the clients a controller uses (client-go's typed
// clientset and informers, the dynamic and metadata clients,
// controller-runtime's client and cache, listwatch's restsource) can be
// pointed at the in-memory apiserver through a plain *rest.Config: no
// binaries, no etcd, and the fake's faults, churn and call log still
// apply.
//
// # Usage
//
//	srv := fake.NewTestServer(t, fake.Options{}) // pods and configmaps
//	cfg := fakeapi.ServeTest(t, srv, fakeapi.Options{})
//	cs := kubernetes.NewForConfigOrDie(cfg)
//	pod, err := cs.CoreV1().Pods("ns").Create(ctx, &corev1.Pod{...}, metav1.CreateOptions{})
//
// Outside a test, Serve(ctx, srv, opts) serves until ctx ends. Handler is
// the http.Handler itself, and Pipe serves any handler (Handler wrapped in
// a test's own middleware, say) over in-memory connections, as
// Options.InMemory does.
//
// What is served, for the resources the fake.Server serves
// (fake.Server.Resources), at /api/v1/... and /apis/GROUP/VERSION/...,
// namespaced or cluster-scoped:
//
//   - list and watch, with every list and watch semantic of package fake
//     (resource versions, continue tokens, selectors, bookmarks, streaming
//     lists), the injected faults of fake.Server.FailNext, InjectWatchFault,
//     Stall and Down (a refused connection is a dropped one), and the call
//     log; gets and writes meet the Failures that name their verb
//     (fake.VerbGet ... fake.VerbDeleteCollection) and Down before they
//     are served;
//   - get, create (201; generateName, uid, creationTimestamp and
//     resourceVersion as fake.Server.Create sets them), update (a stale
//     resourceVersion is a 409 Conflict), delete (preconditions on UID
//     and resourceVersion; a 200 Status naming the deleted object) and
//     deletecollection (fake.Server.DeleteCollection: what the label and
//     field selectors match, answered as a list);
//   - finalizers as kube-apiserver's registry handles them
//     (fake.Server.DeleteWith): a delete of an object with finalizers
//     answers it marked with metadata.deletionTimestamp (a MODIFIED
//     event), propagationPolicy Orphan and Foreground add the garbage
//     collector's finalizers (no garbage collector runs), an update or
//     patch may not add a finalizer to a deleting object (422) and one
//     that removes its last finalizer deletes it;
//   - dry runs (dryRun=All) of create, update, patch, delete and
//     deletecollection: the answer kube-apiserver gives (a dry-run create
//     has no resourceVersion, the others the stored one), and nothing
//     written;
//   - patch: JSON patch, merge patch and, for typed resources, strategic
//     merge patch, applied to the current object and retried on a
//     concurrent write unless the patch changes metadata.resourceVersion;
//   - the status subresource, for typed resources whose Go type has a
//     Status field and unstructured ones with fake.Resource.StatusSubresource:
//     get, update and patch of /status change the status and, for a typed
//     resource, the metadata (but a deployment's labels and a pod's owner
//     references), not the spec; of an unstructured one only the status
//     (the rest of the body is ignored); updates and patches of the object
//     keep the stored status, as kube-apiserver's registries do;
//   - the scale subresource of typed deployments, replica sets, stateful
//     sets and replication controllers: an autoscaling/v1 Scale to get,
//     update or patch, whose writes set spec.replicas;
//   - a certificate signing request's approval subresource: writes of
//     the status conditions and the metadata only;
//   - pods' binding and eviction subresources (typed pods): a binding
//     assigns the pod to its node once (409 after), an eviction deletes
//     the pod unless the PodDisruptionBudget that selects it allows no
//     disruption (429), and charges the one that allows it; no disruption
//     controller runs;
//   - server-side field validation of built-in types (fieldValidation):
//     a create's, update's or patched object's unknown or duplicate fields
//     are Warning headers by default (Warn), a 400 (a patch: 422) with
//     Strict, nothing with Ignore; a custom resource's body is not checked
//     (no CRD schemas);
//   - discovery: /version, /api, /apis, /api/v1, /apis/GROUP and
//     /apis/GROUP/VERSION in the unaggregated form (status subresources
//     listed), enough for
//     kubernetes.NewForConfig and a discovery-based RESTMapper.
//
// Bodies are read as JSON, YAML or protobuf for typed resources (client-go's
// typed clients send protobuf) and as JSON for unstructured ones. Answers
// are JSON, or PartialObjectMetadata(List) in JSON when the Accept header
// asks for it; with Options.Protobuf, protobuf for a typed resource when
// the Accept header's first choice is protobuf (watches as
// length-delimited frames), as kube-apiserver answers. Error Statuses are
// JSON. Errors
// are kube-apiserver's Status bodies with its codes: 404 for an unserved
// path or a missing object, 409 AlreadyExists and Conflict, 400 for a
// malformed body or a name or namespace that is not the URL's, 405 for a
// verb not served, 413 for a body over MaxRequestBodyBytes, 415 for a
// content type it cannot read, 422 Invalid from the fake's metadata
// validation. A failed request changes nothing in the fake.
//
// Not served yet: subresources other than status (404), server-side
// apply (415), Table output, aggregated discovery and OpenAPI, grace
// periods (every resource deletes as a ConfigMap does), the namespaces
// resource, and gets and writes in the fake's call log.
//
// # Concurrency
//
// The handler is safe for concurrent use: it holds no state of its own
// beyond what Handler read from the fake.Server (its resources and scheme,
// which do not change) and every request goes through the fake.Server's
// methods, which are. A watch streams from its own request goroutine until
// the client goes, the fake ends it, or the server stops: stopping
// (ctx's end for Serve, the test's for ServeTest, Pipe's stop) cancels
// every request's context, closes every connection and, for ServeTest and
// Pipe, waits for every handler to return.
//
// # Testing
//
// The package's tests drive the handler through client-go and
// controller-runtime: a typed clientset's create, get, update, patch (three
// kinds), delete and list equal the fake's state; a stale resourceVersion
// is a 409, generateName names the object; dry runs of every write answer
// and write nothing (no event); a finalizer keeps a deleted object, marked,
// until a patch removes it; a shared informer factory syncs
// through the config and sees a create; controller-runtime's client maps
// and writes through the served discovery; protobuf answers and watches
// (an in-stream error included) decode in client-go; FailNext faults on
// lists and on each write verb reach the client with their codes and leave
// the fake as it was; malformed, oversized and wrongly typed bodies get
// 400, 413 and 415 with a Status; discovery feeds a deferred discovery
// RESTMapper. goleak checks the package's goroutines in TestMain.
package fakeapi
