package restsource

import (
	"encoding/binary"
	"hash/maphash"
	"sync"
	"unsafe"
)

// partTable is an Interner's table of shared parts (Options.ShareRepeated):
// decoded parts of objects (a container's env, a pod's affinity, a label
// map, ...) keyed by where they sit (their partSite) and by their
// encoding, so that objects whose parts are encoded alike share one
// decoded copy, and a hit skips decoding it. It admits a part on its
// second sighting, as the string table does, and keeps the admitted ones
// in sets of internWays per shard, dropping the least recently used;
// a shard doubles when it has dropped an eighth of its size, up to its
// share of the capacity.
//
// Bound: at most maxParts entries, whose encodings (copied: the frame they
// came from is reused) take at most partKeyBudget bytes per entry of the
// capacity in all; a part whose encoding is longer than maxPartLen, or
// that would pass the budget, is not kept.
type partTable struct {
	seed   maphash.Seed
	shards [partShards]partShard
}

// partShards is the number of shards: enough that decode workers rarely
// meet on a lock.
const partShards = 16

// maxPartLen is the longest encoding of a part that is kept.
const maxPartLen = 4096

// partKeyBudget is the encoding bytes the table may hold per entry of its
// capacity.
const partKeyBudget = 512

type partShard struct {
	mu       sync.Mutex
	entries  []partEntry // in sets of internWays, the newest first
	seen     admission   // the parts seen once
	max      int         // entries this shard grows to
	dropped  int         // admitted entries dropped since the last growth
	keyBytes int         // encoding bytes held
	budget   int         // the most keyBytes may reach

	hits, misses, admitted, evictions, full uint64
	_                                       [64]byte // keeps the shards' locks on separate cache lines
}

// partEntry is one shared part.
type partEntry struct {
	h    uint64
	site partSite
	key  string // the encoding
	val  any
}

// partSite says which field of which type a part is; parts of different
// sites never match.
type partSite uint8

func (t *partTable) init(initial, maxEntries int) {
	t.seed = maphash.MakeSeed()
	per := max(internWays, initial/partShards)
	maxPer := max(per, maxEntries/partShards)
	for i := range t.shards {
		sh := &t.shards[i]
		sh.entries = make([]partEntry, per)
		sh.seen.init(per)
		sh.max, sh.budget = maxPer, maxPer*partKeyBudget
	}
}

// partKey is a part's encoding: a, followed by b if the part's encoding
// is in two pieces (a container without its volume mounts).
type partKey struct{ a, b []byte }

func (k partKey) len() int { return len(k.a) + len(k.b) }

// equal reports whether s is k's encoding.
func (k partKey) equal(s string) bool {
	return len(s) == k.len() && s[:len(k.a)] == string(k.a) && s[len(k.a):] == string(k.b)
}

func (k partKey) String() string { return string(k.a) + string(k.b) }

// hash returns the hash of a part at site encoded as k.
func (t *partTable) hash(site partSite, k partKey) uint64 {
	h := maphash.Bytes(t.seed, k.a)
	if len(k.b) > 0 {
		h = h*0x100000001b3 ^ maphash.Bytes(t.seed, k.b)
	}
	return h ^ uint64(site)*0x9e3779b97f4a7c15
}

func (t *partTable) shard(h uint64) *partShard { return &t.shards[h%partShards] }

// set returns the index of the first entry of the set of hash h.
func (sh *partShard) set(h uint64) int {
	return int((h/partShards)%uint64(len(sh.entries)/internWays)) * internWays
}

// get returns the shared part at site encoded as enc (of hash h), if any.
func (t *partTable) get(site partSite, h uint64, enc partKey) (any, bool) {
	sh := t.shard(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	i := sh.set(h)
	for j := i; j < i+internWays; j++ {
		if e := sh.entries[j]; e.h == h && e.site == site && enc.equal(e.key) {
			sh.hits++
			// Move it to the front: the parts that keep being used stay,
			// those kept but no longer used (an object's own, seen twice
			// because it was sent twice) go first.
			copy(sh.entries[i+1:j+1], sh.entries[i:j])
			sh.entries[i] = e
			return e.val, true
		}
	}
	sh.misses++
	return nil, false
}

// put offers val, the part at site encoded as enc (of hash h), which get
// did not find: it is kept if it was seen before (and fits), and then
// shared by later objects. The caller must not modify val afterwards
// either way.
func (t *partTable) put(site partSite, h uint64, enc partKey, val any) {
	if enc.len() > maxPartLen {
		return
	}
	sh := t.shard(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !sh.seen.admit(h) {
		return
	}
	i := sh.set(h)
	for j := i; j < i+internWays; j++ {
		if e := &sh.entries[j]; e.h == h && e.site == site && enc.equal(e.key) {
			return // another goroutine kept it meanwhile
		}
	}
	if sh.keyBytes+enc.len() > sh.budget {
		sh.full++
		return
	}
	sh.admitted++
	if last := &sh.entries[i+internWays-1]; last.val != nil {
		sh.evictions++
		sh.dropped++
		sh.keyBytes -= len(last.key)
	}
	copy(sh.entries[i+1:i+internWays], sh.entries[i:i+internWays-1])
	sh.entries[i] = partEntry{h: h, site: site, key: enc.String(), val: val}
	sh.keyBytes += enc.len()
	if sh.dropped >= len(sh.entries)/8 && len(sh.entries) < sh.max {
		sh.grow()
	}
}

// grow doubles the shard, keeping its entries; the caller holds its lock.
func (sh *partShard) grow() {
	old := sh.entries
	sh.entries, sh.dropped = make([]partEntry, 2*len(old)), 0
	sh.seen.init(len(sh.entries))
	for set := 0; set < len(old); set += internWays {
		for j := set + internWays - 1; j >= set; j-- { // oldest first: the newest end up first
			if e := old[j]; e.val != nil {
				i := sh.set(e.h)
				copy(sh.entries[i+1:i+internWays], sh.entries[i:i+internWays-1])
				sh.entries[i] = e
			}
		}
	}
	// Entries dropped by the copy (more than a set's worth landing in one
	// set) took their encodings with them.
	sh.keyBytes = 0
	for _, e := range sh.entries {
		sh.keyBytes += len(e.key)
	}
}

// PartStats are the counts of an Interner's table of shared parts
// (Options.ShareRepeated).
type PartStats struct {
	// Hits and Misses count lookups; Admitted the misses kept (seen
	// before); Evictions the kept parts dropped for new ones; Full the
	// parts not kept because the encodings held reached their budget.
	Hits, Misses, Admitted, Evictions, Full uint64
	// Len is the number of parts held, Capacity the table's size now,
	// MaxCapacity the most it grows to.
	Len, Capacity, MaxCapacity int
	// Bytes is the memory of the table: its entries, fingerprints and the
	// encodings it holds (the shared values are held by the objects too).
	Bytes int64
}

// HitRate is Hits / (Hits + Misses), or 0 before any lookup.
func (s PartStats) HitRate() float64 { return hitRate(s.Hits, s.Misses) }

func (t *partTable) stats() PartStats {
	var st PartStats
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		st.Hits += sh.hits
		st.Misses += sh.misses
		st.Admitted += sh.admitted
		st.Evictions += sh.evictions
		st.Full += sh.full
		st.Capacity += len(sh.entries)
		st.MaxCapacity += sh.max
		st.Bytes += int64(len(sh.entries))*int64(unsafe.Sizeof(partEntry{})) + sh.seen.bytes() + int64(sh.keyBytes)
		for j := range sh.entries {
			if sh.entries[j].val != nil {
				st.Len++
			}
		}
		sh.mu.Unlock()
	}
	return st
}

// sharePart returns the part at site encoded as enc: the shared copy if
// the table holds one (decode is not called), else decode(enc), which the
// table is offered. Whatever is returned is the caller's to keep, never to
// modify.
func sharePart[F any](t *partTable, site partSite, enc []byte, decode func([]byte) (F, error)) (F, error) {
	return sharePartKeep(t, site, partKey{a: enc}, func() (F, error) { return decode(enc) }, nil)
}

// sharePartKeep is sharePart for an encoding in two pieces (k), offering
// a part it decoded to the table only if keep (if set) says so after
// decoding it.
func sharePartKeep[F any](t *partTable, site partSite, k partKey, decode func() (F, error), keep func() bool) (F, error) {
	h := t.hash(site, k)
	if v, ok := t.get(site, h, k); ok {
		return v.(F), nil
	}
	f, err := decode()
	if err != nil || keep != nil && !keep() {
		return f, err
	}
	t.put(site, h, k, f)
	return f, nil
}

// Pointers to small values (a pod's priority or preemption policy, a
// container status's started, a mount's recursiveReadOnly) that every
// object holds one of its own of: with ShareRepeated, an object's pointer
// is replaced by one that objects holding an equal value share, kept in
// the table of parts like any part, keyed by the value's bytes at a site
// per Go type. Each is 8 to 16 bytes and an allocation, a dozen per pod.
var (
	siteBoolPtr      = newSite()
	siteInt32Ptr     = newSite()
	siteInt64Ptr     = newSite()
	siteStringPtr    = newSite() // *string
	sitePreemptPtr   = newSite() // *corev1.PreemptionPolicy
	siteRecursivePtr = newSite() // *corev1.RecursiveReadOnlyMode
)

// sharedPtr returns p, or with ShareRepeated a pointer to an equal value
// shared by the objects whose value at site is encoded as enc.
func sharedPtr[T any](in *interning, site partSite, enc []byte, p *T) *T {
	if p == nil || in.policy&sharesParts == 0 {
		return p
	}
	v, _ := sharePart(&in.Interner.parts, site, enc, func([]byte) (*T, error) { return p, nil })
	return v
}

var boolEncodings = [2][]byte{{0}, {1}}

func (in *interning) boolPtr(p *bool) *bool {
	if p == nil {
		return nil
	}
	b := 0
	if *p {
		b = 1
	}
	return sharedPtr(in, siteBoolPtr, boolEncodings[b], p)
}

func (in *interning) int32Ptr(p *int32) *int32 {
	if p == nil {
		return nil
	}
	b := binary.LittleEndian.AppendUint32(in.scalar[:0], uint32(*p))
	return sharedPtr(in, siteInt32Ptr, b, p)
}

func (in *interning) int64Ptr(p *int64) *int64 {
	if p == nil {
		return nil
	}
	b := binary.LittleEndian.AppendUint64(in.scalar[:0], uint64(*p))
	return sharedPtr(in, siteInt64Ptr, b, p)
}

// stringPtr shares p, a pointer to a string of a type of its own at site.
func stringPtr[S ~string](in *interning, site partSite, p *S) *S {
	if p == nil {
		return nil
	}
	s := string(*p)
	return sharedPtr(in, site, unsafe.Slice(unsafe.StringData(s), len(s)), p)
}
