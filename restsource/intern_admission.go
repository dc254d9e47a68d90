package restsource

import "sync/atomic"

// admission is the filter in front of the Interner's tables (the strings'
// and the parts'): a key (by its hash) is admitted on its second
// sighting, so that keys unique to one object never take the place of
// those that repeat. A first sighting leaves a 4-byte fingerprint,
// seenPerSlot of them per slot of the table, in buckets of seenPerSlot so
// that keys that meet in a bucket do not keep wiping each other out. It is
// safe for concurrent use.
type admission struct {
	seen   []atomic.Uint32
	victim atomic.Uint64 // picks the fingerprint a full bucket gives up
}

// seenPerSlot is the number of fingerprints per slot: a key is admitted if
// it is seen again before about seenPerSlot times the table's size of
// other first sightings.
const seenPerSlot = 4

// init empties a, sized for a table of slots slots.
func (a *admission) init(slots int) { a.seen = make([]atomic.Uint32, seenPerSlot*slots) }

// admit reports whether the key of hash h was seen before (and forgets
// it), else remembers it.
func (a *admission) admit(h uint64) bool {
	fp := uint32(h>>32) | 1
	b := a.seen[(h>>20)%uint64(len(a.seen)/seenPerSlot)*seenPerSlot:][:seenPerSlot]
	free := -1
	for i := range b {
		switch v := b[i].Load(); v {
		case fp:
			b[i].Store(0)
			return true
		case 0:
			free = i
		}
	}
	if free < 0 {
		free = int(a.victim.Add(1) % seenPerSlot)
	}
	b[free].Store(fp)
	return false
}

// bytes returns the memory a's fingerprints take.
func (a *admission) bytes() int64 { return int64(4 * len(a.seen)) }
