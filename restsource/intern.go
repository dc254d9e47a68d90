package restsource

import (
	"hash/maphash"
	"sync"
)

// Interner deduplicates the strings that repeat across decoded objects
// (namespaces, label and annotation keys and values, owner references,
// node, container, image and env names, ...): objects decoded through a
// Source with [Options.Interner] share one copy of each instead of holding
// their own, which shrinks a cache of similar objects.
//
// An Interner is bounded: it holds at most its capacity of strings, in a
// fixed table allocated up front, and never grows. A string that is not
// in the table replaces the less recently added of the two it may go to,
// so strings that keep repeating stay and the rest come and go; strings
// longer than [MaxInternedLen] are never interned. Interning only ever
// replaces a string by an equal one: objects are the same with or without
// an Interner.
//
// An Interner is safe for concurrent use, and may be shared by several
// Sources (one per informer factory, say): the strings of pods, their
// ReplicaSets and their nodes repeat across resources.
type Interner struct {
	seed   maphash.Seed
	shards []internShard
	mask   uint64 // of a slot index within a shard; slots per shard - 1
}

// internShard is one lock's worth of the table. Slots come in pairs
// (2i, 2i+1): a string may sit in either slot of its pair, the newer one
// in the first.
type internShard struct {
	mu        sync.Mutex
	slots     []string
	hits      uint64
	misses    uint64
	evictions uint64
	_         [64]byte // keeps the shards' locks on separate cache lines
}

// MaxInternedLen is the length of the longest string an Interner interns:
// longer ones (a long annotation's value, say) are unlikely to repeat
// often enough to be worth the lookup.
const MaxInternedLen = 256

// internShards is the number of shards: enough that the decode workers
// rarely meet on a lock.
const internShards = 16

// DefaultInternerCapacity is the capacity NewInterner gives for 0.
const DefaultInternerCapacity = 8192

// NewInterner returns an Interner that holds at most capacity strings
// (rounded up to a power of two, at least 32), or
// DefaultInternerCapacity for 0 or less. Its table takes 16 bytes per
// string of capacity, plus the strings it holds. The default suits most
// clusters: room for every namespace, label, image and node name in use.
func NewInterner(capacity int) *Interner {
	if capacity <= 0 {
		capacity = DefaultInternerCapacity
	}
	per := uint64(2)
	for per*internShards < uint64(capacity) {
		per *= 2
	}
	in := &Interner{seed: maphash.MakeSeed(), shards: make([]internShard, internShards), mask: per - 1}
	for i := range in.shards {
		in.shards[i].slots = make([]string, per)
	}
	return in
}

// Bytes returns a string equal to b: the interned one if there is one,
// else a new one that is interned unless it is too long. A hit allocates
// nothing.
func (in *Interner) Bytes(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > MaxInternedLen {
		return string(b)
	}
	sh, i := in.slot(maphash.Bytes(in.seed, b))
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if s := sh.slots[i]; s == string(b) {
		sh.hits++
		return s
	}
	if s := sh.slots[i+1]; s == string(b) {
		sh.hits++
		return s
	}
	s := string(b)
	sh.add(i, s)
	return s
}

// String returns the interned string equal to s if there is one, else s,
// which it interns unless s is too long.
func (in *Interner) String(s string) string {
	if len(s) == 0 || len(s) > MaxInternedLen {
		return s
	}
	sh, i := in.slot(maphash.String(in.seed, s))
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if t := sh.slots[i]; t == s {
		sh.hits++
		return t
	}
	if t := sh.slots[i+1]; t == s {
		sh.hits++
		return t
	}
	sh.add(i, s)
	return s
}

// slot returns the shard and the first slot of the pair of hash h.
func (in *Interner) slot(h uint64) (*internShard, uint64) {
	return &in.shards[h%internShards], (h / internShards & in.mask) &^ 1
}

// add puts s in the first slot of pair i, moving the string there to the
// second slot and dropping the one there.
func (sh *internShard) add(i uint64, s string) {
	sh.misses++
	if sh.slots[i+1] != "" {
		sh.evictions++
	}
	sh.slots[i+1], sh.slots[i] = sh.slots[i], s
}

// InternerStats are an Interner's counts since it was made.
type InternerStats struct {
	// Hits and Misses count the lookups that found an equal string and
	// those that did not (and added theirs). Empty and too long strings
	// are not counted.
	Hits, Misses uint64
	// Evictions counts the strings dropped to make room.
	Evictions uint64
	// Len is the number of strings held; Capacity the most it can hold.
	Len, Capacity int
}

// HitRate is Hits / (Hits + Misses), or 0 before any lookup.
func (s InternerStats) HitRate() float64 {
	if s.Hits+s.Misses == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Hits+s.Misses)
}

// Stats returns the Interner's counts.
func (in *Interner) Stats() InternerStats {
	var st InternerStats
	for i := range in.shards {
		sh := &in.shards[i]
		sh.mu.Lock()
		st.Hits += sh.hits
		st.Misses += sh.misses
		st.Evictions += sh.evictions
		for _, s := range sh.slots {
			if s != "" {
				st.Len++
			}
		}
		st.Capacity += len(sh.slots)
		sh.mu.Unlock()
	}
	return st
}
