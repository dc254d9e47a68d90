package workqueue

import iring "github.com/listwatch/listwatch/internal/ring"

// ringSlot names an entry and the generation it had when it was pushed.
type ringSlot struct {
	idx int32
	gen uint32
}

// ring is the ready set for items of priority zero, whose keys arrive in
// non-decreasing order: a patient ring (see internal/ring), which shrinks
// only after more removals since its last resize than it has slots, so
// that refilling queues do not thrash.
type ring = iring.Ring[ringSlot]

// newReadyRing returns an empty ready ring, which never shrinks to 1024
// slots or fewer.
func newReadyRing() ring { return ring{Keep: 1024, Patient: true} }
