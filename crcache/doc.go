// Package crcache is a controller-runtime cache built on listwatch end to
// end: a cache.NewCacheFunc for manager.Options.NewCache.
//
// # Usage
//
// One line in the manager's options:
//
//	mgr, err := ctrl.NewManager(cfg, manager.Options{NewCache: crcache.New})
//
// Everything else stays controller-runtime's: cache.Options (namespaces,
// selectors, transforms, ByObject, SyncPeriod, ...), the client, the
// builder, IndexField. The cache is controller-runtime's own (cache.New),
// with every informer listwatch's drop-in (clientgo/tools/cache's
// NewSharedIndexInformer). The informer does not list and watch through
// the ListWatch controller-runtime hands it: it decodes with restsource,
// with the memory options of [Options.Memory] (by default managedFields
// stripped while decoding, one bounded Interner per cache, the parts that
// repeat across objects shared):
//
//   - built-in types of client-go's scheme (Pods, ConfigMaps,
//     Deployments, ...) in protobuf;
//   - metadata-only objects (metav1.PartialObjectMetadata, the builder's
//     OnlyMetadata) of any resource, custom ones included, in protobuf;
//   - unstructured objects in JSON, their map keys and repeating values
//     interned;
//   - custom resources' Go types, any the cache's scheme knows, in JSON
//     (objects made from the type's constructor, [restsource.NewObjects];
//     listing them in [Options.Types] is no longer needed). A type listed
//     in [Options.ClientDecoded] (an escape hatch), and any list the probe
//     cannot read, are listed and watched through controller-runtime's
//     client, on listwatch's informer, with managedFields stripped by a
//     transform that runs before the user's (logged, V(1) when chosen).
//
// [NewWithOptions] sets the options:
//
//	newCache := crcache.NewWithOptions(crcache.Options{
//		Memory:        &informers.MemoryOptions{}, // keep managedFields, no interning
//		ClientDecoded: []client.Object{&v1.Legacy{}}, // decoded as controller-runtime decodes it
//	})
//	mgr, err := ctrl.NewManager(cfg, manager.Options{NewCache: newCache})
//
// Where controller-runtime waits for an informer to sync (GetInformer,
// and Get and List unless ReaderFailOnMissingInformer is set), the cache
// stops waiting when the informer's list has failed for a lasting reason
// (403 Forbidden, 401, 404) and returns the server's error, so that
// apierrors.IsForbidden(err) holds, instead of blocking until the context
// ends; the informer keeps retrying. A custom resource installed after the
// manager started is found by controller-runtime's lazy REST mapper on
// first use.
//
// controller-runtime's ListWatch hides its namespace and selectors in
// closures. The cache learns them by a probe: its clients' HTTP client
// has a transport that recognises a context value set by the cache, and
// for such a request records the URL (path with the namespace, query
// with the label and field selectors) and fails it without sending
// anything. The informer's restsource Source then requests that same
// path and query. A probe has a context of its own, bounded by a few
// seconds and cancelled when it returns, and takes no client-side
// rate-limiter token: controller-runtime's clients, built from the config
// given to the cache, wait on a limiter that lets probes through and
// makes any other request wait where it waited before (the config's
// RateLimiter shared as before, or a bucket of its QPS and Burst per
// client). If the probe cannot learn them (the ListWatch does not go
// through the cache's HTTP client, sends parameters restsource cannot
// repeat, or does not return in time), the informer uses the ListWatch
// itself and the cache logs why on [Options.Logger]. Which decoder serves
// an informer, and why when it is controller-runtime's client, is also in
// its snapshot (informer.Snapshot's Decoder and DecoderReason, with the
// resource, namespace and selectors the probe learnt), on the
// [StatusPage] and in the metric informer_decoder_info.
//
// [Options.MetricsRegisterer] exports every informer of the cache to
// Prometheus (informer/promprovider), e.g. on controller-runtime's
// metrics.Registry, which the manager's metrics server serves:
//
//	crcache.NewWithOptions(crcache.Options{MetricsRegisterer: metrics.Registry})
//
// and [Options.StatusPage] shows them on a page ([StatusPage]) that can be
// mounted on the same server.
//
// [Fresh] checks, before a disruptive action, that the cache of a type has
// caught up with the server (informer.Informer.Fresh; not yet for sharded
// informers):
//
//	if err := crcache.Fresh(ctx, mgr.GetCache(), &corev1.Pod{}); err != nil {
//		return ctrl.Result{RequeueAfter: time.Minute}, nil // hold the eviction
//	}
//
// cache.Options.NewInformer, if set, builds the informers instead of
// listwatch's constructor (over the restsource Source where the cache
// uses one, so they decode as listwatch's do); use [Options.OnNewInformer]
// to see the informers built.
//
// # Sharding
//
// [Options.Shard] spreads the cached objects over the replicas of a
// controller (package shard, docs/sharding.md): the cache joins a ring of
// coordination.k8s.io Leases as a shard.Member when it starts, and every
// informer of a sharded type lists and watches through a shard.Source, so
// it caches only the member's slices (the server filters with a shard
// selector when it has the ShardedListAndWatch gate, the Source on the
// client otherwise). When a replica joins or leaves, slices move as
// package shard moves them: a listwatch informer relists from its own
// cache (asking the server only for the slices gained) and keeps a lost
// slice until its new owner has listed it.
//
//	newCache := crcache.NewWithOptions(crcache.Options{Shard: &crcache.ShardOptions{
//		Member:  shard.MemberOptions{Namespace: "my-operator", Ring: "configmaps"},
//		Objects: map[client.Object]shard.Field{&corev1.ConfigMap{}: shard.FieldUID},
//	}})
//	mgr, err := ctrl.NewManager(cfg, manager.Options{NewCache: newCache})
//
// [ShardOptions.Objects] chooses the sharded types and the field each
// hashes; without it, every namespaced type but Leases is sharded by
// namespace, so that the objects a controller reads together in one
// namespace are cached by one replica. A type left out is cached whole
// on every replica.
//
// The handlers controller-runtime registers (a controller's sources, so
// a controller built with the builder) hear only the keys the member
// owns: an object moved to another member is not told as a deletion, the
// adds and updates of a slice being handed over go to its new owner only,
// a deletion on the server goes to the handlers of whichever members still
// cache the object, and the objects of a slice handed back before it left
// the cache are told again as adds when it returns. Get and List read the
// cache as it is, a slice being handed over included, for at most a
// moment. The member joins the ring in the cache's Start and leaves it,
// its Lease deleted, once the cache's informers have stopped (a manager
// stops its controllers first), so that no other replica takes a slice
// over while this one may still reconcile its keys.
//
// Every replica of a ring must configure the same sharded types with the
// same selectors (an informer's part in the handover is named after its
// kind, namespace and selectors). A transform (cache.Options'
// DefaultTransform, ByObject's) must be idempotent: a relist served from
// the cache feeds cached objects through it again. An informer removed by
// RemoveInformer stays registered with the member, which then no longer
// announces that it has listed its slices: the other members keep the
// slices they lose to it cached, as in a handover, until it restarts.
//
// [ShardMember] returns the cache's member (a manager's GetCache), whose
// Status reports the ring, the slices owned and the handovers in progress.
//
// # Changing namespaces at run time
//
// With [Options.Live] the cache's informers of namespaced types hold
// [LiveOptions.Namespaces] (cache.Options.DefaultNamespaces left empty),
// and [SetNamespaces] changes them while the manager runs, instead of a
// restart: each informer lists only the namespaces it gains and drops the
// ones it loses without a request, its handlers hearing only the
// difference (deletes with the object, not tombstones), its queues and
// registrations kept. Built on package scope; see docs/operations.md,
// "Changing scope at run time".
//
// # Concurrency
//
// The cache is controller-runtime's, and as safe for concurrent use. The
// probe runs while controller-runtime builds an informer (under its lock)
// and sends nothing. Cached objects may share strings and resource maps
// through the Interner: treat them as read-only (controller-runtime's
// reader hands out deep copies unless UnsafeDisableDeepCopy is set).
//
// # Testing
//
// The tests run a manager's cache against fake.Server served over HTTP
// (fake/fakeapi): Get and List of typed, unstructured and metadata-
// only objects equal the server's, namespaces, label and field selectors,
// IndexField lookups, managedFields stripped by default and kept when
// opted out, and which informers decode with restsource (shown in
// snapshots, on the status page and in metrics: TestDecoderShown).
// TestProbeLearns pins what a probe learns of controller-runtime's
// ListWatches and its failures (a timeout in virtual time);
// TestProbesTakeNoToken and TestProbeLimiter that probes take no
// rate-limiter token while real requests wait as before. TestRealAPIServer
// does the same through a real kube-apiserver's TLS and token
// authentication (internal/testing/testapiserver; skipped under -short). The peer
// suite controller-runtime-crcache (make peer) runs controller-runtime's
// own pkg/cache specs with cache.New replaced by New against a real
// kube-apiserver; hack/peer/known-failures.txt lists the specs that fail
// and why (they expect managedFields in the cache). TestShardedCaches runs
// two sharded caches of one ring over fake.Server (shard selectors applied
// and ignored), with their Leases in client-go's fake clientset: each
// caches exactly its slices, a join and a leave move them, the Lease is
// released on stop, a controller-side handler hears only owned keys and
// no move as a deletion; TestShardedInformerHandlers drives the handler
// filter directly (adds and updates of objects not owned dropped, moves
// dropped, deletions passed, the cached objects of gained slices told
// again). examples/crsharded runs manager processes on the
// sharded cache against a real kube-apiserver (kill -9, scale up and
// down; TestManagerProcesses).
//
//	go test -race ./crcache/
package crcache
