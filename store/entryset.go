package store

// entrySet is the large form of a postings list: an open-addressing hash set
// of entry pointers, hashed by entry.id, with linear probing and
// backward-shift deletion. A Go map[*entry]struct{} pads each slot to 16
// bytes and adds a control byte; this set spends 8 bytes per slot, at most
// 7/8 full. Probing compares pointers in one contiguous array, so the high
// fill costs little to find a member; a deletion's backward shift, though,
// reads the id of each later member of the run (one entry each), which is
// most of a steady-state deletion's index cost. Ids (the low bits of the
// key's hash) are spread again by Fibonacci hashing.
//
// Invariants: len(slots) is 0 or a power of two >= minSetSize; count is the
// number of non-nil slots and count <= 7/8 len(slots); every member sits in
// the probe run starting at its home slot with no empty slot in between;
// no member appears twice.
type entrySet[T any] struct {
	slots []*entry[T]
	count int
}

const minSetSize = 16

// homeOf spreads entry ids over the table by Fibonacci hashing.
func homeOf[T any](e *entry[T], mask int) int {
	return int((uint64(e.id)*0x9e3779b97f4a7c15)>>32) & mask
}

// add inserts e, which must not be a member (callers dedupe values, and an
// entry is only added under a value it was not filed under).
func (s *entrySet[T]) add(e *entry[T]) {
	if (s.count+1)*8 > len(s.slots)*7 {
		s.resize(max(minSetSize, 2*len(s.slots)))
	}
	s.place(e)
	s.count++
}

func (s *entrySet[T]) place(e *entry[T]) {
	m := len(s.slots) - 1
	i := homeOf(e, m)
	for s.slots[i] != nil {
		i = (i + 1) & m
	}
	s.slots[i] = e
}

// find returns e's slot, or -1.
func (s *entrySet[T]) find(e *entry[T]) int {
	if s.count == 0 {
		return -1
	}
	m := len(s.slots) - 1
	for i := homeOf(e, m); s.slots[i] != nil; i = (i + 1) & m {
		if s.slots[i] == e {
			return i
		}
	}
	return -1
}

func (s *entrySet[T]) resize(n int) {
	old := s.slots
	s.slots = make([]*entry[T], n)
	for _, e := range old {
		if e != nil {
			s.place(e)
		}
	}
}

// remove deletes e if present, shifting later members of its probe run back
// so that lookups never stop early.
func (s *entrySet[T]) remove(e *entry[T]) {
	hole := s.find(e)
	if hole < 0 {
		return
	}
	m := len(s.slots) - 1
	for j := (hole + 1) & m; s.slots[j] != nil; j = (j + 1) & m {
		// The member at j may fill the hole unless its home lies
		// cyclically in (hole, j].
		if (j-homeOf(s.slots[j], m))&m >= (j-hole)&m {
			s.slots[hole] = s.slots[j]
			hole = j
		}
	}
	s.slots[hole] = nil
	s.count--
	if len(s.slots) > minSetSize && s.count*8 < len(s.slots) {
		s.resize(len(s.slots) / 2)
	}
}
