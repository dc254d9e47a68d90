// Package fake is an in-memory Kubernetes apiserver for tests, with
// scriptable faults. It serves one or more resource types through
// ListerWatchers that client-go (cache.NewReflector, informers) and listwatch
// accept, and mimics kube-apiserver v1.36's list and watch semantics closely
// enough that a client which works against it should work against a real
// server.
//
// # Usage
//
//	srv, err := fake.NewServer(fake.Options{}) // pods and configmaps
//	pod, err := srv.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}})
//	lw := srv.ListerWatcher(fake.LWOptions{Resource: fake.Pods().GVR, Namespace: "ns"})
//	list, err := lw.ListWithContext(ctx, metav1.ListOptions{}) // *corev1.PodList
//	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: list.(*corev1.PodList).ResourceVersion})
//
// Writes (Create, Update, Delete) are the test's hand: they take a global
// etcd-like resource version shared by all types, are never faulted, and
// return the apierrors StatusErrors kube-apiserver does, with its codes,
// reasons, messages and details: AlreadyExists, NotFound, Conflict on a
// resourceVersion or UID precondition (a delete's on the kind, an update's
// UID mismatch as etcd's StorageError), 422 Invalid from apimachinery's
// metadata validation (name, namespace, labels, annotations, owner
// references, finalizers), a bare 500 for a create that sets
// resourceVersion. Objects are deep-copied in and out; the server never
// shares a pointer with a caller.
//
// Deletes honour finalizers as kube-apiserver's registry does
// (Server.DeleteWith): an object with finalizers is kept and marked with
// metadata.deletionTimestamp (a MODIFIED event), propagationPolicy Orphan
// and Foreground add the garbage collector's finalizers, an update may not
// add a finalizer to it, and the update that removes its last finalizer
// deletes it (DELETED). CreateWith, UpdateWith, DeleteWith and
// DeleteCollectionWith take kube-apiserver's write options, dry run
// (DryRun All: the answer the server gives, nothing written) included.
//
// Two fidelity options are off by default so that existing tests keep
// working: Options.RequireNamespaces (a create in a namespace never made
// with CreateNamespace is 404 `namespaces "X" not found`) and
// Options.FieldManager (writes record a metadata.managedFields Update entry
// for that manager).
//
// Lists follow kube-apiserver: resourceVersion "" is the latest state
// (consistent read); "0" is the latest state too and, as the watch cache
// does, ignores limit; "N" with resourceVersionMatch NotOlderThan (or no
// match and no limit) waits up to Options.TooLargeRVTimeout for the server to
// reach N and answers the latest state, else 504 with cause
// ResourceVersionTooLarge; "N" with Exact (or no match and a limit) answers
// the state at exactly N, reconstructed from history, or 410 Expired if N was
// compacted. Pages are ordered by namespace/name; continue tokens pin the
// first page's resource version, and an expired one is a 410 carrying an
// inconsistent continue token, as etcd-backed servers do. Options are
// validated with apimachinery's own ListOptions validation (422 Invalid).
//
// Watches follow the watch cache: without sendInitialEvents, RV "" or "0"
// opens with ADDED events for the current state, RV "N" replays history
// after N (410 in-stream ERROR event if N left the window, see
// Options.WatchCache); with
// sendInitialEvents=true (which requires resourceVersionMatch=NotOlderThan)
// the watch opens with the state at least as new as RV and, if bookmarks were
// allowed, a bookmark annotated k8s.io/initial-events-end: "true" at the
// server's RV. Label and field selectors apply to lists and watches; a
// watched object that stops matching yields DELETED (its old state at the new
// RV), one that starts matching yields ADDED. Bookmarks (an empty object of
// the resource type with only metadata.resourceVersion) come every
// Options.BookmarkInterval and, as from the watch cache, once a second from
// 2 s before a timeoutSeconds deadline on; timeoutSeconds closes the watch
// cleanly.
//
// KEP-5866 shard selectors (metav1.ListOptions.ShardSelector) follow
// Options.ShardSelectors: ignored by default, as by a server without the
// ShardedListAndWatch gate; with ShardSelectorsApplied, lists, watches and
// streaming lists carry only the objects whose metadata.uid or namespace
// hashes into the selector's ranges, and lists echo the selector in
// ListMeta.ShardInfo (ShardSelectorsUnechoed filters without echoing).
//
// Faults: FailNext fails the next K lists and/or watches with 403, 404, 410,
// 429 + Retry-After, 500 or a connection refused error, shaped as client-go's
// REST client would return them (and, through Fault, the gets and writes
// that fake/fakeapi serves: VerbGet ... VerbDelete); InjectWatchFault closes new watches after N
// events or at a time, delays their events or stalls them; Stall/Unstall and
// CloseWatches act on open watches; Down and Up take the whole server away
// (open watches close, calls are refused). Compact forgets history.
//
// Package fake/fakeapi serves a Server over kube-apiserver's REST API
// (reads, writes, patches and discovery) and returns a rest.Config, so that
// client-go's clientsets and informers, controller-runtime and restsource
// reach it as they would a cluster; Resources and Scheme are what it routes
// and decodes with.
//
// NewChurn drives seeded, reproducible create/update/delete traffic, and
// Converged/ConvergedKeys check that a client store holds exactly the
// server's objects at their resource versions, with a readable diff.
//
// The package's fidelity tests run the same scripted writes, lists and
// watches against the fake and a real kube-apiserver v1.36 (through
// internal/testing/testapiserver; skipped under -short) and require identical
// answers: items and resource versions, 4xx/5xx codes, reasons and messages,
// continue tokens, and the event sequences of legacy, resumed, selector and
// streaming watches.
//
// Known differences from kube-apiserver, by design:
//
//   - The history window (Options.HistorySize) is shared by all resources,
//     like etcd's; the watch cache keeps one per resource.
//   - A real server with its watch cache keeps serving exact lists and
//     continue tokens from cache snapshots for a while after an etcd
//     compaction; the fake answers 410 as soon as it compacts.
//   - By default (WatchCacheFollowsCompaction) Compact also shortens the
//     window watches replay from, and a watch from before it gets the watch
//     cache's message. WatchCacheOwnWindow models the real watch cache (its
//     window ignores etcd compaction); WatchCacheDisabled models
//     --watch-cache=false ("The resourceVersion for the provided watch is
//     too old.").
//   - A Failure's Times counts calls as the ListerWatcher's caller sees them,
//     and errors carrying Retry-After (429, the 504 for a too large RV) come
//     back at once, where client-go's REST client would first retry them up
//     to ten times.
//   - There is no admission beyond RequireNamespaces, no defaulting and no
//     type-specific validation (only metadata), and no grace periods: a
//     pod is deleted at once, as a real one that was never scheduled (a
//     scheduled one first gets a deletionTimestamp and waits for its
//     kubelet); no garbage collector removes the orphan and
//     foregroundDeletion finalizers. Namespaces are names, not objects:
//     they cannot be deleted or watched.
//   - managedFields (with FieldManager) approximate server-side apply's
//     field sets: lists are owned whole, status is never owned, one manager
//     owns every set field.
//   - Bookmarks follow a plain schedule: no bucketing, and no bookmark owed
//     to a new watch when the cache's RV (moved by etcd progress
//     notifications) passes its position.
//
// # Concurrency
//
// Every Server method is safe for concurrent use. One mutex guards the
// objects, history and watcher registry; a write commits under it and offers
// the event to every open watch without blocking: each watch has its own
// goroutine and a queue of at most Options.WatchBufferSize live events
// (opening events are not counted). A client that falls behind that far has
// its watch closed by the server, as kube-apiserver closes watches it cannot
// feed; the client re-watches from its last RV and loses nothing. Result
// channels are unbuffered and closed when a watch ends (Stop, context
// cancellation, timeout, fault, Down, overflow).
//
// # Testing
//
// Time comes from Options.Clock (k8s.io/utils/clock), used for bookmarks,
// watch timeouts, delays, scheduled closes and the too-large-RV wait. Under
// testing/synctest the default real clock is virtual, so
// synctest.Wait() after a write makes every watch's delivery observable
// deterministically; a fake clock from k8s.io/utils/clock/testing works too.
// Server.Stats counts calls, faults and slow-watch closes; Server.Calls logs
// every List and Watch with its options and outcome, so a test can assert
// the exact request sequence a client issued. NewTestServer
// fails the test on bad options and closes leftover watches at cleanup, so
// goleak stays quiet.
package fake
