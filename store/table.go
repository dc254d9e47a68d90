package store

import "hash/maphash"

// table is the key → entry map: an open-addressing hash set of *entry keyed
// by entry.key, with linear probing and backward-shift deletion (no
// tombstones). A Go map[string]*entry spends a 24-byte slot per object (the
// key header is stored in the map and again in the entry); this table
// spends one pointer plus one tag byte per slot, at most 3/4 full. It
// grows by a quarter (not double), its size any multiple of 8, a hash
// mapped to its home slot by multiplication: just after growing it is
// still 60% full, where a table just past a doubling is 38% full.
//
// objs mirrors each entry's object in a dense array, so that a full List
// copies contiguous memory instead of dereferencing every entry: the read
// lock is held several times shorter, which is what keeps writers moving
// while readers list.
//
// Invariants: len(slots) == len(tags) == len(objs) and is 0 or a multiple
// of 8; tags[i] == 0 exactly when slots[i] == nil, otherwise tags[i] is
// tagOf(hash of slots[i].key) and slots[i].id is the low 32 bits of that
// hash; objs[i] == slots[i].obj for a full slot and
// the zero T for an empty one; every entry sits in the probe run starting
// at its home slot (slotOf) with no empty slot between home and it, the
// run wrapping from the last slot to the first; count is the number of
// non-nil slots and count <= 3/4 len(slots).
type table[T any] struct {
	seed  maphash.Seed
	slots []*entry[T]
	tags  []uint8
	objs  []T
	count int
}

const minTableSize = 8

func newTable[T any]() table[T] { return table[T]{seed: maphash.MakeSeed()} }

// tagOf keeps 7 bits of the hash, with the top bit set so 0 means empty.
func tagOf(h uint64) uint8 { return uint8(h>>57) | 0x80 }

// slotOf maps hash h to a slot of a table of n slots: the low 32 bits,
// scaled (the tag keeps the top ones).
func slotOf(h uint64, n int) int { return int(uint64(uint32(h)) * uint64(n) >> 32) }

// next returns the slot after i, wrapping around.
func (t *table[T]) next(i int) int {
	if i++; i == len(t.slots) {
		return 0
	}
	return i
}

// dist is the number of slots from a forward to b, wrapping around.
func (t *table[T]) dist(a, b int) int {
	if b >= a {
		return b - a
	}
	return b - a + len(t.slots)
}

// grown is the size after n: a quarter more, a multiple of 8.
func grown(n int) int { return max(minTableSize, (n+n/4+7)&^7) }

// find returns the slot holding key, or -1.
func (t *table[T]) find(key string) int {
	if t.count == 0 {
		return -1
	}
	h := maphash.String(t.seed, key)
	tag := tagOf(h)
	for i := slotOf(h, len(t.slots)); t.slots[i] != nil; i = t.next(i) {
		if t.tags[i] == tag && t.slots[i].key == key {
			return i
		}
	}
	return -1
}

// setObj replaces the object of the entry in slot i.
func (t *table[T]) setObj(i int, obj T) {
	t.slots[i].obj, t.objs[i] = obj, obj
}

// get returns the entry for key, or nil.
func (t *table[T]) get(key string) *entry[T] {
	if i := t.find(key); i >= 0 {
		return t.slots[i]
	}
	return nil
}

// getBytes is get for a key held in a byte slice, without allocating.
func (t *table[T]) getBytes(key []byte) *entry[T] {
	if t.count == 0 {
		return nil
	}
	h := maphash.Bytes(t.seed, key)
	tag := tagOf(h)
	for i := slotOf(h, len(t.slots)); t.slots[i] != nil; i = t.next(i) {
		if t.tags[i] == tag && t.slots[i].key == string(key) {
			return t.slots[i]
		}
	}
	return nil
}

// insert adds e, whose key must not be present, and sets e.id.
func (t *table[T]) insert(e *entry[T]) {
	if (t.count+1)*4 > len(t.slots)*3 {
		t.resize(grown(len(t.slots)))
	}
	h := maphash.String(t.seed, e.key)
	e.id = uint32(h)
	t.place(e, tagOf(h))
	t.count++
}

// place puts e, with its tag, in the first empty slot of its probe run,
// which starts at the home slot of e.id.
func (t *table[T]) place(e *entry[T], tag uint8) {
	i := slotOf(uint64(e.id), len(t.slots))
	for t.slots[i] != nil {
		i = t.next(i)
	}
	t.slots[i], t.tags[i], t.objs[i] = e, tag, e.obj
}

// resize moves every entry into n slots; entries keep their ids and tags,
// so no key is hashed again.
func (t *table[T]) resize(n int) {
	old, oldTags := t.slots, t.tags
	t.slots, t.tags, t.objs = make([]*entry[T], n), make([]uint8, n), make([]T, n)
	for i, e := range old {
		if e != nil {
			t.place(e, oldTags[i])
		}
	}
}

// removeAt empties slot i and shifts later members of the probe run back so
// that lookups never stop early. Entries only move into the emptied slot or
// into slots after it in the run, which is what lets sweep delete while
// scanning forward.
func (t *table[T]) removeAt(i int) {
	hole := i
	for j := t.next(i); t.slots[j] != nil; j = t.next(j) {
		home := slotOf(uint64(t.slots[j].id), len(t.slots))
		// The entry at j may fill the hole unless its home lies
		// cyclically in (hole, j].
		if t.dist(home, j) >= t.dist(hole, j) {
			t.slots[hole], t.tags[hole], t.objs[hole] = t.slots[j], t.tags[j], t.objs[j]
			hole = j
		}
	}
	var zero T
	t.slots[hole], t.tags[hole], t.objs[hole] = nil, 0, zero
	t.count--
}

// remove deletes key and returns its entry, or nil.
func (t *table[T]) remove(key string) *entry[T] {
	i := t.find(key)
	if i < 0 {
		return nil
	}
	e := t.slots[i]
	t.removeAt(i)
	return e
}

// maybeShrink resizes the table to half full once it is less than 1/8
// full, so a store that shrank in a relist gives memory back. Only a sweep
// (a relist's end) shrinks: a removal never does, as a Go map never does,
// because a store drained by deletions and filled again by additions (a
// namespace's pods recreated, a churning workload) would otherwise grow
// from nothing each time, moving every entry some five times over (the
// table grows by a quarter) where it has kept its slots. The price, as a
// Go map's: a drained table keeps 17 bytes per slot, and a full List scans
// them, until the next relist.
func (t *table[T]) maybeShrink() {
	if len(t.slots) > minTableSize && t.count*8 < len(t.slots) {
		t.resize(max(minTableSize, (2*t.count+7)&^7))
	}
}

// sweep removes every entry for which drop returns true, calling drop once
// per entry that is present when the sweep starts (an entry moved back into
// the current slot is examined before moving on; one moved from the start of
// the table across the end may be offered twice, which is harmless for a
// drop that depends only on the entry).
func (t *table[T]) sweep(drop func(*entry[T]) bool) {
	for i := 0; i < len(t.slots); {
		if e := t.slots[i]; e != nil && drop(e) {
			t.removeAt(i)
			continue
		}
		i++
	}
	t.maybeShrink()
}

// all calls yield for every entry, in slot order, until it returns false.
func (t *table[T]) all(yield func(*entry[T]) bool) {
	for _, e := range t.slots {
		if e != nil && !yield(e) {
			return
		}
	}
}
