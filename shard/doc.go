// Package shard spreads one Kubernetes resource over the replicas of a
// controller: the 2^64 hash space of KEP-5866 shard selectors is cut into a
// fixed number of slices, and each slice is given to one live member of a
// ring by rendezvous (highest-random-weight) hashing.
//
// An object's place in the hash space is the 64-bit FNV-1a hash of its
// metadata.uid ([FieldUID], the default) or of its metadata.namespace
// ([FieldNamespace]): [Hash] computes the same number as the API server's
// k8s.io/apimachinery/pkg/sharding. Slice i of n holds the hashes from
// ceil(i·2^64/n) up to the next slice's start. An [Assignment] names the
// owner of every slice ([Assignment.Owner]); it depends on nothing but the
// member set and the slice count, so every replica that sees the same
// members computes the same one. A member joining takes only the slices it
// now outbids the others for, and one leaving gives up only its own: no
// slice ever moves between two members that stay ([Assignment.With],
// [Assignment.Without], [Moved]).
//
// A member's slices become a shard selector for list and watch requests
// ([Assignment.Selector]: adjacent slices merge into one shardRange), and a
// [Matcher] for the client-side fallback when the server did not apply it
// (the list response carries no ListMeta.ShardInfo). [ParseSelector] reads
// a selector back, e.g. the one a response echoes, into apimachinery's
// sharding.Selector.
//
// A [Member] is one replica's place in a ring of replicas: it holds a
// coordination.k8s.io/v1 Lease, labelled [RingLabel] with the ring's name
// and named <ring>-<identity> (the identity is the pod name by default),
// renews it, watches
// the ring's Leases and, whenever the set of live members changes, computes
// the new [Assignment] and hands a [Change] (what the member gained and
// lost) to [MemberOptions.OnChange]. A Lease is live while its renewTime
// plus leaseDurationSeconds is after now ([Peer.Live], [LiveMembers]).
//
// A [Source] wraps a list-and-watch source (informer.Options.Source) so that
// an informer caches only the member's objects: it sends the member's
// selector and filters on the client unless the list response's
// ListMeta.ShardInfo echoes it. [Attach] ties it to its informer: on each
// Change the informer relists from its own cache, the server being asked
// only for the slices gained (at the cache's resource version), and the
// slices lost dropped without a request. A lost slice is handed over, not
// dropped at once: the member stops owning it ([Source.Owns]) but keeps it
// cached and watched until its new owner announces on its Lease
// ([ListedAnnotation]) that it has listed it, so that a deletion racing the
// handover is heard as a deletion by one of them. Dropped objects arrive as
// deletes with finalStateUnknown, which Owns tells apart from deletions; a
// Source is an informer.Owner, so a handler with OnMovedAway
// (informer.MovedAwayHandler) hears them there instead. Without Attach,
// each Change relists the whole part ([Source.RelistWith] the informer's
// Relist; without that, it ends its watches with 410 Gone) and lost slices
// are dropped at once.
//
// With [MemberOptions.Fenced], a member hands over "at most one owner at
// a time" instead of "never unowned": a slice it gains is withheld
// ([Change.Withheld]; [Change.Handed], [Change.Matcher] and
// [Change.Selector] leave it out, and Source and Filter follow them) until
// every other live member announces on its Lease an assignment without it,
// or that Lease has been expired for [MemberOptions.SkewMargin].
// [Member.Status] reports the members, the slices owned and withheld;
// [Census] and [SliceCensus] count objects per member and per slice.
//
// A [Filter] follows a member's assignment (feed it each Change) and says
// whether the member owns an object; [FilterFunc] adapts it to a typed
// informer hook such as informer.FilteringHandler, so that a work queue sees
// only owned keys.
//
// FNV-1a (the server's choice) spreads random uids well, but names that
// differ only in their last character hash close together and usually share
// a slice: with [FieldNamespace], tenant-0 ... tenant-9 land on one member.
//
// docs/sharding.md has the design, the guarantees and the measured
// figures.
//
// # Usage
//
//	a, err := shard.Assign([]string{"pod-0", "pod-1", "pod-2"}, shard.Options{})
//	sel, ok, err := a.Selector("pod-1", shard.FieldUID)
//	if !ok {
//		// pod-1 owns nothing: list nothing (an empty selector means everything)
//	}
//	opts := metav1.ListOptions{ShardSelector: sel}
//	m, err := a.Matcher("pod-1", shard.FieldUID)
//	if list.ShardInfo == nil { // the server ignored the selector
//		keep := m.Owns(obj)
//	}
//
// Joining a ring:
//
//	mem, err := shard.NewMember(ctx, shard.MemberOptions{
//		Client:    clientset,
//		Namespace: "my-controller",
//		Ring:      "pods",
//		OnChange: func(c shard.Change) {
//			// c.Assignment.Selector(c.Member, shard.FieldUID), c.Gained, c.Lost
//		},
//	})
//	go mem.Run(ctx) // releases the Lease when ctx ends
//
// A sharded informer, the Member's Changes driving the Source (the
// Source example has it whole):
//
//	src, err := shard.NewSource(ctx, shard.SourceOptions{Inner: reflector.FromClient(clientset.CoreV1().Pods(""))})
//	// shard.MemberOptions{..., OnChange: src.OnChange}
//	inf, err := informer.New(informer.Options[*corev1.Pod]{Source: src})
//	shard.Attach(src, inf)
//
// # Concurrency
//
// [Assignment], [Matcher] and [Range] values are immutable once made and
// safe for concurrent use; [Assignment.With] and [Assignment.Without]
// return new assignments and leave the receiver unchanged. Computing an
// assignment starts no goroutine and reads no clock.
//
// [Member.Run] starts a listwatch informer on the ring's Leases (its
// goroutines end before Run returns) and does everything else on its own
// goroutine: renewals,
// liveness, OnChange calls, which are therefore sequential and in order. A
// slow OnChange delays renewals, so it must hand work off rather than do it.
// [Member.Assignment] and [Member.Status] may be called from any goroutine.
// [Source] and [Filter] may be updated while in use: readers see the old
// or the new part, never a mix; each watch of a Source runs one goroutine
// that ends with the watch.
//
// # Testing
//
// The assignment is checked against a plain rewrite of the rendezvous rule
// on random rings (every slice has exactly one owner; a join or leave moves
// exactly the slices the rewrite says, all to the newcomer or from the
// leaver, and about slices/N of them); the hash against the server's; the
// selector through apimachinery's sharding.Selector (same string, same
// Matches as the client-side Matcher on random objects). Member runs under
// testing/synctest against client-go's fake clientset with a fake clock
// (k8s.io/utils/clock/testing): joins, renewals, a peer that stops
// renewing, a member whose renewals fail (it counts itself out when its own
// Lease lapses), release on shutdown; goleak checks that nothing is left
// running. Source is checked against listwatch's fake apiserver
// (package fake, random uids) serving shard selectors as a server with the
// ShardedListAndWatch gate does (applied, ShardInfo echoed), without
// echoing them, or ignoring them, and end to end under a listwatch
// informer through two reassignments; test/conformance holds fake/'s
// selectors to kube-apiserver's. Without -short, two tests start a
// real kube-apiserver (internal/testing/testapiserver): TestRealServer checks the
// selectors, ShardInfo and both Source modes with the ShardedListAndWatch
// gate on and off; TestRealRing runs Members on real Leases with Sources
// and informers through a leave and a join and logs the handover gap and
// overlap. TestShardedChurn runs three replicas over listwatch's fake
// apiserver under churn through a leave and a join and checks that every
// pod ends up held once, by its owner, at its latest version. Fencing is
// checked on the pure view (join, crash, graceful leave) and with Members
// under synctest: no slice is ever handed out by two members at once.
// examples/sharded runs replica processes of a sharded controller on a
// real kube-apiserver (TestReplicaProcesses: kill -9, 2 → 3 → 5 → 2 under
// churn, fenced and not).
package shard
