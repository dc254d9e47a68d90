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
// # Concurrency
//
// [Assignment], [Matcher] and [Range] values are immutable once made and
// safe for concurrent use; [Assignment.With] and [Assignment.Without]
// return new assignments and leave the receiver unchanged. Computing an
// assignment starts no goroutine and reads no clock.
//
// # Testing
//
// The assignment is checked against a plain rewrite of the rendezvous rule
// on random rings (every slice has exactly one owner; a join or leave moves
// exactly the slices the rewrite says, all to the newcomer or from the
// leaver, and about slices/N of them); the hash against the server's; the
// selector through apimachinery's sharding.Selector (same string, same
// Matches as the client-side Matcher on random objects).
package shard
