// Package conformance is a Ginkgo suite that runs the same list/watch specs
// against listwatch's in-memory fake apiserver (package fake) and against a
// real kube-apiserver v1.36 with etcd (internal/testing/testapiserver), so that every
// behaviour the fake claims is checked against the server it imitates.
//
// The specs cover list resourceVersion semantics ("", "0", NotOlderThan,
// Exact, a future RV), ordering, pagination (limit, continue, the list RV
// pinned across pages, remainingItemCount), watch starting points (RV N, ""
// and "0", sendInitialEvents with its initial-events-end bookmark), bookmarks
// and watch timeouts, label and field selectors on lists and watches
// (objects leaving and entering a selector), 410 Expired after compaction
// (exact lists, continue tokens, watches with and without a watch cache), and
// the exact Status of errors (403, 404, 409 AlreadyExists and Conflict, 400
// and 422 for bad options, 504 for a future RV), and writes: finalizers
// (a delete marks the object with deletionTimestamp, the update or patch
// removing the last finalizer deletes it, no new finalizers on a deleting
// object, propagationPolicy's orphan and foregroundDeletion finalizers, a
// create in a terminating namespace), and dry runs of create, update,
// patch and delete.
//
// # Usage
//
// Specs talk to a server only through the Cluster interface. NewFakeCluster
// wraps a fake.Server built from FakeOptions (ConfigMaps and Secrets);
// NewRealCluster wraps the admin and unprivileged rest.Configs of a real
// apiserver; NewFakeAPICluster makes RealCluster's very requests to a
// fake.Server served over REST by fake/fakeapi. Run the suite with
//
//	hack/build-apiserver.sh        # once; cached afterwards
//	go test -race -count=1 ./test/conformance/... -ginkgo.v
//	go test -race -count=1 -short ./test/conformance/...   # fake only
//
// Each spec is registered three times, under the "fake", "fakeapi" and
// "kube-apiserver" containers; compaction specs run under two fake containers (one with
// fake.WatchCacheOwnWindow, one with fake.WatchCacheDisabled) and two
// kube-apiserver containers with a dedicated server compacting every second
// (one with the watch cache, one without). The fake cluster is built with
// RequireNamespaces and a FieldManager, as a real cluster behaves.
//
// A behaviour where the fake is known to differ from kube-apiserver is
// registered with itFakeDiffers: it runs (and must pass) against the real
// server, is Pending for the fake with the difference in its text, and carries
// the label fake-differs. To check a fix in fake/, run
//
//	LISTWATCH_CONFORMANCE_RUN_FAKE_DIFFERS=1 go test -count=1 -short ./test/conformance/... -ginkgo.label-filter=fake-differs
//
// and, once the fake passes, register the spec with it instead.
//
// # Concurrency
//
// Cluster implementations are safe for concurrent use. The suite runs specs
// serially: the real variant shares one apiserver started in BeforeSuite and
// gives every spec its own namespace, so specs never see each other's
// objects; the fake variant gives every spec a fresh fake.Server. Server-wide
// behaviour (compaction) gets a dedicated server per Ordered container.
//
// # Testing
//
// Under go test -short every real-apiserver spec is skipped and the fake
// variant runs alone (about 10 s, mostly the 3 s waits for a future RV and
// for watch timeouts). The full suite starts three apiservers and takes
// about a minute on two cores. Real-server waits use Eventually or bounded
// polls, never fixed sleeps; watch assertions compare exact event sequences,
// and a live write after the expected events proves nothing else came in
// between.
package conformance
