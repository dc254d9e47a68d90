package workqueue

import "hash/maphash"

// itemIndex maps items to slab indices. It is an open-addressing table with
// linear probing and backward-shift deletion (so no tombstones build up
// under the constant insert/delete churn of a work queue), one hash per
// operation, 8-byte slots, and it shrinks after bursts.
//
// A slot is 0 when empty, else tag<<32 | (slab index + 1), where tag is the
// low 32 bits of the item's hash; tag & mask is the slot's home position.
// Invariant: every live slot is reachable from its home position without
// crossing an empty slot, and n counts live slots.
type itemIndex[T comparable] struct {
	seed  maphash.Seed
	slots []uint64 // power-of-two length, at most half full
	n     int
	// deletes counts deletions since the last resize. Shrinking waits
	// until it exceeds len(slots), so a resize costs O(1) per operation
	// amortised and a queue that empties and refills does not thrash.
	deletes int
}

const minIndexSlots = 64

func newItemIndex[T comparable]() itemIndex[T] {
	return itemIndex[T]{seed: maphash.MakeSeed(), slots: make([]uint64, minIndexSlots)}
}

// hash returns the 32-bit tag of item.
func (x *itemIndex[T]) hash(item T) uint32 {
	return uint32(maphash.Comparable(x.seed, item))
}

// find returns the slot holding item (found), or the empty slot where it
// would be inserted.
func (x *itemIndex[T]) find(tag uint32, item T, entries *slab[entry[T]]) (pos int, idx int32, found bool) {
	mask := len(x.slots) - 1
	for pos = int(tag) & mask; ; pos = (pos + 1) & mask {
		s := x.slots[pos]
		if s == 0 {
			return pos, -1, false
		}
		if uint32(s>>32) == tag {
			idx = int32(uint32(s)) - 1
			if entries.at(idx).item == item {
				return pos, idx, true
			}
		}
	}
}

// insertAt fills the empty slot pos returned by find.
func (x *itemIndex[T]) insertAt(pos int, tag uint32, idx int32) {
	x.slots[pos] = uint64(tag)<<32 | uint64(uint32(idx+1))
	x.n++
	if 2*x.n > len(x.slots) {
		x.resize(2 * len(x.slots))
	}
}

// deleteIdx removes the slot of slab index idx, whose item hashed to tag.
func (x *itemIndex[T]) deleteIdx(tag uint32, idx int32) {
	mask := len(x.slots) - 1
	want := uint64(tag)<<32 | uint64(uint32(idx+1))
	pos := int(tag) & mask
	for x.slots[pos] != want {
		pos = (pos + 1) & mask
	}
	x.deleteAt(pos)
}

// deleteAt empties slot pos and shifts later members of its cluster back.
func (x *itemIndex[T]) deleteAt(pos int) {
	mask := len(x.slots) - 1
	hole := pos
	for j := (pos + 1) & mask; x.slots[j] != 0; j = (j + 1) & mask {
		home := int(uint32(x.slots[j]>>32)) & mask
		// The entry at j may move into the hole unless its home lies
		// cyclically in (hole, j].
		if (j-home)&mask >= (j-hole)&mask {
			x.slots[hole] = x.slots[j]
			hole = j
		}
	}
	x.slots[hole] = 0
	x.n--
	x.deletes++
	if len(x.slots) > minIndexSlots && 8*x.n < len(x.slots) && x.deletes > len(x.slots) {
		x.resize(max(minIndexSlots, 4*ceilPow2(x.n)))
	}
}

func (x *itemIndex[T]) resize(size int) {
	x.deletes = 0
	old := x.slots
	x.slots = make([]uint64, size)
	mask := size - 1
	for _, s := range old {
		if s == 0 {
			continue
		}
		pos := int(uint32(s>>32)) & mask
		for x.slots[pos] != 0 {
			pos = (pos + 1) & mask
		}
		x.slots[pos] = s
	}
}

// ceilPow2 returns the smallest power of two ≥ n (1 for n ≤ 1).
func ceilPow2(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}
