package shard

// The rendezvous (highest-random-weight) rule: slice s belongs to the live
// member m with the highest Weight(m, s); equal weights go to the member
// whose name sorts first. Each member's weights are independent of every
// other member, so adding a member takes from each incumbent exactly the
// slices the newcomer now outbids it for, and removing one hands out only
// its own slices: no slice ever moves between two members that stay.
//
// The weight function is part of the contract between the replicas of a
// ring: replicas that computed it differently would disagree on owners.
// Changing it needs a new ring name.

// sliceSalt separates slice seeds from member seeds (the golden ratio).
const sliceSalt = 0x9e3779b97f4a7c15

// memberSeed is the part of a weight that depends on the member alone.
func memberSeed(member string) uint64 { return mix(Hash(member)) }

// sliceSeed is the part of a weight that depends on the slice alone.
func sliceSeed(slice int) uint64 { return mix(uint64(slice) + sliceSalt) }

// weight combines a member seed and a slice seed.
func weight(member, slice uint64) uint64 { return mix(member ^ slice) }

// Weight is member's bid for slice: the owner of a slice is the member with
// the highest weight, ties going to the smaller name.
func Weight(member string, slice int) uint64 {
	return weight(memberSeed(member), sliceSeed(slice))
}

// beats reports whether a bid (w, name) wins over the bid (bw, bname).
func beats(w uint64, name string, bw uint64, bname string) bool {
	return w > bw || (w == bw && name < bname)
}
