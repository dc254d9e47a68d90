package restsource

import (
	"hash/maphash"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Interner deduplicates the strings that repeat across decoded objects
// (namespaces, label and annotation keys and values, owner references,
// node, container, image and env names, ...): objects decoded through a
// Source with [Options.Interner] share one copy of each instead of holding
// their own, which shrinks a cache of similar objects.
//
// An Interner is bounded: it holds at most its capacity of strings, in a
// fixed table allocated up front, and never grows. A string that is not
// in the table takes the first of the eight slots it may go to, dropping
// the least recently added of them, so strings that keep repeating stay
// and the rest come and go; strings
// longer than [MaxInternedLen] are never interned. Interning only ever
// replaces a string by an equal one: objects are the same with or without
// an Interner.
//
// An Interner is safe for concurrent use, and may be shared by several
// Sources (one per informer factory, say): the strings of pods, their
// ReplicaSets and their nodes repeat across resources.
type Interner struct {
	seed  maphash.Seed
	slots []atomic.Pointer[string] // in sets of internWays, the newest first
	mask  uint64                   // of a set's index: sets - 1

	hits, misses, evictions atomic.Uint64

	lists []listShard // Options.ShareResourceLists
}

// listShard is one lock's worth of the ResourceList table, whose slots
// come in sets of internWays too.
type listShard struct {
	mu        sync.Mutex
	lists     []corev1.ResourceList
	hits      uint64
	misses    uint64
	evictions uint64
	_         [64]byte // keeps the shards' locks on separate cache lines
}

// MaxInternedLen is the length of the longest string an Interner interns:
// longer ones (a long annotation's value, say) are unlikely to repeat
// often enough to be worth the lookup.
const MaxInternedLen = 256

// listShards is the number of shards of the ResourceList table: enough
// that the decode workers rarely meet on a lock.
const listShards = 16

// DefaultInternerCapacity is the capacity NewInterner gives for 0.
const DefaultInternerCapacity = 8192

// NewInterner returns an Interner that holds at most capacity strings
// (rounded up to a power of two, at least 32), or
// DefaultInternerCapacity for 0 or less, and an eighth as many
// ResourceLists (Options.ShareResourceLists; at least 128). Its table
// takes 8 bytes per string of capacity, plus 16 per string held and the
// strings. The default suits most clusters: room for every namespace,
// label, image and node name in use.
func NewInterner(capacity int) *Interner {
	if capacity <= 0 {
		capacity = DefaultInternerCapacity
	}
	n := 32
	for n < capacity {
		n *= 2
	}
	in := &Interner{seed: maphash.MakeSeed(), slots: make([]atomic.Pointer[string], n), mask: uint64(n/internWays - 1),
		lists: make([]listShard, listShards)}
	for i := range in.lists {
		in.lists[i].lists = make([]corev1.ResourceList, max(internWays, n/8/listShards))
	}
	return in
}

// Bytes returns a string equal to b: the interned one if there is one,
// else a new one that is interned unless it is too long. A hit allocates
// nothing.
func (in *Interner) Bytes(b []byte) string {
	s, hit, counted := in.lookupBytes(b)
	switch {
	case hit:
		in.hits.Add(1)
	case counted:
		in.misses.Add(1)
	}
	return s
}

// lookupBytes is Bytes without counting, as lookup is String.
func (in *Interner) lookupBytes(b []byte) (_ string, hit, counted bool) {
	if len(b) == 0 {
		return "", false, false
	}
	if len(b) > MaxInternedLen {
		return string(b), false, false
	}
	i := in.set(maphash.Bytes(in.seed, b))
	for j := i; j < i+internWays; j++ {
		if t := in.slots[j].Load(); t != nil && *t == string(b) {
			return *t, true, true
		}
	}
	s := string(b)
	in.add(i, s)
	return s, false, true
}

// String returns the interned string equal to s if there is one, else s,
// which it interns unless s is too long.
func (in *Interner) String(s string) string {
	t, hit, counted := in.lookup(s)
	switch {
	case hit:
		in.hits.Add(1)
	case counted:
		in.misses.Add(1)
	}
	return t
}

// lookup is String without counting: it says whether s was found, and
// whether the lookup counts (not for empty and too long strings).
func (in *Interner) lookup(s string) (_ string, hit, counted bool) {
	if len(s) == 0 || len(s) > MaxInternedLen {
		return s, false, false
	}
	i := in.set(maphash.String(in.seed, s))
	for j := i; j < i+internWays; j++ {
		if t := in.slots[j].Load(); t != nil && *t == s {
			return *t, true, true
		}
	}
	in.add(i, s)
	return s, false, true
}

// internWays is the number of slots a string may go to: with two, three
// hot strings of a few hundred often share a set (the birthday paradox)
// and evict each other for ever; with eight, nine in one set are
// vanishingly rare.
const internWays = 8

// set returns the index of the first slot of the set of hash h.
func (in *Interner) set(h uint64) uint64 { return internWays * (h & in.mask) }

// add puts s in the first slot of set i, moving the others down one and
// dropping the last (the least recently added). Concurrent adds to one set
// may drop a string or keep one twice: either way every slot holds at most
// one string, equal to what was looked up.
func (in *Interner) add(i uint64, s string) {
	if in.slots[i+internWays-1].Load() != nil {
		in.evictions.Add(1)
	}
	for j := i + internWays - 1; j > i; j-- {
		in.slots[j].Store(in.slots[j-1].Load())
	}
	in.slots[i].Store(&s)
}

// shareList returns the list in the table equal to l, if there is one,
// else l, which it adds after calling prepare with it (prepare may modify
// l: nothing else sees it yet). Equal means the same names and ==
// quantities (the same value in the same form; quantities held as inf.Dec
// pointers are equal only to themselves). The caller must not modify l
// afterwards.
func (in *Interner) shareList(l corev1.ResourceList, prepare func(corev1.ResourceList)) corev1.ResourceList {
	var h uint64
	for k, v := range l { // order-independent: a sum of per-entry hashes
		h += maphash.Comparable(in.seed, resourceEntry{k, v})
	}
	sh := &in.lists[h%listShards]
	i := h / listShards % uint64(len(sh.lists)/internWays) * internWays
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for _, t := range sh.lists[i : i+internWays] {
		if equalLists(t, l) {
			sh.hits++
			return t
		}
	}
	sh.misses++
	prepare(l)
	if sh.lists[i+internWays-1] != nil {
		sh.evictions++
	}
	copy(sh.lists[i+1:i+internWays], sh.lists[i:i+internWays-1])
	sh.lists[i] = l
	return l
}

type resourceEntry struct {
	name corev1.ResourceName
	q    resource.Quantity
}

func equalLists(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
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
	// ListHits, ListMisses and ListEvictions are the same counts for
	// ResourceLists (Options.ShareResourceLists); ListCapacity is the
	// most the table holds (an eighth of Capacity, at least 128).
	ListHits, ListMisses, ListEvictions uint64
	ListCapacity                        int
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
	st := InternerStats{Hits: in.hits.Load(), Misses: in.misses.Load(), Evictions: in.evictions.Load(), Capacity: len(in.slots)}
	for i := range in.slots {
		if in.slots[i].Load() != nil {
			st.Len++
		}
	}
	for i := range in.lists {
		sh := &in.lists[i]
		sh.mu.Lock()
		st.ListHits += sh.hits
		st.ListMisses += sh.misses
		st.ListEvictions += sh.evictions
		st.ListCapacity += len(sh.lists)
		sh.mu.Unlock()
	}
	return st
}
