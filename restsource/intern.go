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
// An Interner adapts to the objects it sees, within a bound. A string is
// admitted to its table only when it is seen a second time (a first
// sighting leaves a 4-byte fingerprint), so strings unique to one object
// (names, UIDs, IPs, per-pod volume names) never take the place of those
// that repeat. The table holds the admitted strings in sets of eight
// slots, dropping the least recently admitted of a set for a new one; it
// starts with room for [InitialInternerCapacity] strings and doubles
// whenever it has dropped an eighth of its size of admitted strings (which
// then repeat without fitting), up to its capacity. Strings longer than [MaxInternedLen] are never
// interned. Interning only ever replaces a string by an equal one:
// objects are the same with or without an Interner.
//
// Memory: 28 bytes per slot of the table (the slot, a tag and four
// fingerprints), so at most 28 bytes times the capacity, plus the strings it holds (at
// most one per slot, each at most MaxInternedLen bytes); [Interner.Stats]
// reports both, and how well the table does.
//
// An Interner is safe for concurrent use, and may be shared by several
// Sources (one per informer factory, say): the strings of pods, their
// ReplicaSets and their nodes repeat across resources.
type Interner struct {
	seed     maphash.Seed
	tab      atomic.Pointer[stringTable]
	maxSlots int
	growMu   sync.Mutex // held while the table is copied into a larger one

	hits, misses, evictions, admitted, grows atomic.Uint64

	lists []listShard // Options.ShareResourceLists
	parts partTable   // Options.ShareRepeated
}

// stringTable is one size of an Interner's table.
type stringTable struct {
	slots []atomic.Pointer[string] // in sets of internWays, the newest first
	// tags[i] is a few bits of the hash of *slots[i], so that a lookup
	// reads only the strings that may match (a tag that is briefly out of
	// step with its slot costs a comparison or a hit, never a wrong
	// string).
	tags []atomic.Uint32
	mask uint64    // of a set's index: sets - 1
	seen admission // the strings seen once
	// dropped counts the admitted strings this table dropped: when it
	// reaches an eighth of the slots, the strings that repeat no longer
	// fit their sets, and the Interner grows.
	dropped atomic.Uint64
}

func newStringTable(slots int) *stringTable {
	t := &stringTable{slots: make([]atomic.Pointer[string], slots), tags: make([]atomic.Uint32, slots),
		mask: uint64(slots/internWays - 1)}
	t.seen.init(slots)
	return t
}

// set returns the index of the first slot of the set of hash h.
func (t *stringTable) set(h uint64) uint64 { return internWays * (h & t.mask) }

// find returns the string equal to s in the set of hash h, if any.
func (t *stringTable) find(h uint64, s string) (*string, bool) {
	i, tag := t.set(h), uint32(h>>32)
	for j := i; j < i+internWays; j++ {
		if t.tags[j].Load() != tag {
			continue
		}
		if p := t.slots[j].Load(); p != nil && *p == s {
			return p, true
		}
	}
	return nil, false
}

// add puts s in the first slot of its set, moving the others down one and
// dropping the last (the least recently added); it reports whether one was
// dropped. Concurrent adds to one set may drop a string or keep one twice:
// either way every slot holds at most one string, equal to what was looked
// up.
func (t *stringTable) add(h uint64, s string) (dropped bool) {
	i := t.set(h)
	dropped = t.slots[i+internWays-1].Load() != nil
	for j := i + internWays - 1; j > i; j-- {
		t.slots[j].Store(t.slots[j-1].Load())
		t.tags[j].Store(t.tags[j-1].Load())
	}
	t.slots[i].Store(&s)
	t.tags[i].Store(uint32(h >> 32))
	return dropped
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

// DefaultInternerCapacity is the capacity NewInterner gives for 0: the
// most strings its table grows to.
const DefaultInternerCapacity = 1 << 18

// InitialInternerCapacity is the size an Interner's table starts with
// (or its capacity, if smaller).
const InitialInternerCapacity = 8192

// NewInterner returns an Interner that holds at most capacity strings
// (rounded up to a power of two, at least 32), or
// DefaultInternerCapacity (262,144: at most 7 MiB of table) for 0 or less. Its
// table starts at InitialInternerCapacity and grows as the strings that
// repeat need room. The ResourceList table (Options.ShareResourceLists)
// holds an eighth of the initial size (at least 128) and the table of
// shared parts (Options.ShareRepeated) grows like the strings' (see
// Options.ShareRepeated for its bound).
func NewInterner(capacity int) *Interner {
	if capacity <= 0 {
		capacity = DefaultInternerCapacity
	}
	n := 32
	for n < capacity {
		n *= 2
	}
	initial := min(n, InitialInternerCapacity)
	in := &Interner{seed: maphash.MakeSeed(), maxSlots: n, lists: make([]listShard, listShards)}
	in.tab.Store(newStringTable(initial))
	for i := range in.lists {
		in.lists[i].lists = make([]corev1.ResourceList, max(internWays, initial/8/listShards))
	}
	in.parts.init(initial/8, n/8)
	return in
}

// Bytes returns a string equal to b: the interned one if there is one,
// else a new one, interned if it was seen before and is not too long. A
// hit allocates nothing.
func (in *Interner) Bytes(b []byte) string {
	s, hit, counted := in.lookupBytes(b)
	in.count(hit, counted)
	return s
}

func (in *Interner) count(hit, counted bool) {
	switch {
	case hit:
		in.hits.Add(1)
	case counted:
		in.misses.Add(1)
	}
}

// lookupBytes is Bytes without counting, as lookup is String.
func (in *Interner) lookupBytes(b []byte) (_ string, hit, counted bool) {
	if len(b) == 0 {
		return "", false, false
	}
	if len(b) > MaxInternedLen {
		return string(b), false, false
	}
	h := maphash.Bytes(in.seed, b)
	t := in.tab.Load()
	if p, ok := t.find(h, string(b)); ok { // no allocation: the conversion is only compared
		return *p, true, true
	}
	s := string(b)
	in.miss(t, h, s)
	return s, false, true
}

// String returns the interned string equal to s if there is one, else s,
// which it interns if it was seen before and is not too long.
func (in *Interner) String(s string) string {
	t, hit, counted := in.lookup(s)
	in.count(hit, counted)
	return t
}

// lookup is String without counting: it says whether s was found, and
// whether the lookup counts (not for empty and too long strings).
func (in *Interner) lookup(s string) (_ string, hit, counted bool) {
	if len(s) == 0 || len(s) > MaxInternedLen {
		return s, false, false
	}
	h := maphash.String(in.seed, s)
	t := in.tab.Load()
	if p, ok := t.find(h, s); ok {
		return *p, true, true
	}
	in.miss(t, h, s)
	return s, false, true
}

// miss admits s (of hash h, not in t) if it was seen before, growing the
// table when it has dropped an eighth of its size of admitted strings.
func (in *Interner) miss(t *stringTable, h uint64, s string) {
	if !t.seen.admit(h) {
		return
	}
	in.admitted.Add(1)
	if !t.add(h, s) {
		return
	}
	in.evictions.Add(1)
	if t.dropped.Add(1) >= uint64(len(t.slots)/8) && len(t.slots) < in.maxSlots {
		in.grow(t)
	}
}

// grow replaces t by a table twice its size holding t's strings, unless
// another goroutine is at it or did it. Strings added to t meanwhile may
// be lost (they are admitted again when they repeat).
func (in *Interner) grow(t *stringTable) {
	if !in.growMu.TryLock() {
		return
	}
	defer in.growMu.Unlock()
	if in.tab.Load() != t {
		return
	}
	nt := newStringTable(2 * len(t.slots))
	for set := 0; set < len(t.slots); set += internWays {
		for j := set + internWays - 1; j >= set; j-- { // oldest first: the newest end up first
			if p := t.slots[j].Load(); p != nil {
				nt.add(maphash.String(in.seed, *p), *p)
			}
		}
	}
	in.tab.Store(nt)
	in.grows.Add(1)
}

// internWays is the number of slots a string may go to: with two, three
// hot strings of a few hundred often share a set (the birthday paradox)
// and evict each other for ever; with eight, nine in one set are
// vanishingly rare.
const internWays = 8

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
	// those that did not. Empty and too long strings are not counted.
	Hits, Misses uint64
	// Admitted counts the misses that were seen before and so added to
	// the table (the others were first sightings); Evictions the admitted
	// strings dropped to make room; Grows the times the table doubled.
	Admitted, Evictions, Grows uint64
	// Len is the number of strings held; Capacity the table's size now,
	// MaxCapacity the most it grows to.
	Len, Capacity, MaxCapacity int
	// Bytes is the memory the Interner holds: its tables (strings, lists,
	// shared parts), the strings it holds and the parts' encodings (not
	// the shared values themselves, which the cached objects hold).
	Bytes int64
	// ListHits, ListMisses and ListEvictions are the same counts for
	// ResourceLists (Options.ShareResourceLists); ListCapacity is the
	// most the table holds.
	ListHits, ListMisses, ListEvictions uint64
	ListCapacity                        int
	// Parts are the counts of the table of shared parts
	// (Options.ShareRepeated).
	Parts PartStats
}

// HitRate is Hits / (Hits + Misses), or 0 before any lookup.
func (s InternerStats) HitRate() float64 { return hitRate(s.Hits, s.Misses) }

func hitRate(hits, misses uint64) float64 {
	if hits+misses == 0 {
		return 0
	}
	return float64(hits) / float64(hits+misses)
}

// Stats returns the Interner's counts.
func (in *Interner) Stats() InternerStats {
	t := in.tab.Load()
	st := InternerStats{Hits: in.hits.Load(), Misses: in.misses.Load(), Admitted: in.admitted.Load(),
		Evictions: in.evictions.Load(), Grows: in.grows.Load(), Capacity: len(t.slots), MaxCapacity: in.maxSlots,
		Bytes: 12*int64(len(t.slots)) + t.seen.bytes()}
	for i := range t.slots {
		if p := t.slots[i].Load(); p != nil {
			st.Len++
			st.Bytes += int64(len(*p)) + 16
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
	st.Bytes += int64(8 * st.ListCapacity)
	st.Parts = in.parts.stats()
	st.Bytes += st.Parts.Bytes
	return st
}
