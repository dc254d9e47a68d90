// Package mapreuse is the one home of "what becomes of a Go map when it
// empties", for the module's queues keyed by object key: a delta FIFO's
// coalescing queue and a listener's coalescing buffer.
//
// A Go map never shrinks. One that once held many keys (an initial list)
// keeps its table, and a large table that then sees a stream of distinct
// keys pays for its size and its deleted slots on every lookup, so it is
// replaced when it empties. But a queue that fills past that size on every
// burst of writes would then grow a new map, rehashing, on every burst: a
// map whose last two fills both passed the threshold, the last at least a
// quarter of its peak, is cleared and kept instead (clearing also drops the
// deleted slots). A small map is kept as it is.
//
// # Usage
//
//	t := mapreuse.Tracker{Big: 1024}
//	m[k] = v
//	t.Note(len(m))
//	...
//	delete(m, k)
//	if len(m) == 0 {
//		switch t.Emptied() {
//		case mapreuse.Clear:
//			clear(m)
//		case mapreuse.Replace:
//			m = map[string]V{}
//		}
//	}
//
// # Concurrency
//
// A Tracker is not safe for concurrent use: the owner of the map guards it.
//
// # Testing
//
// mapreuse_test.go drives a Tracker through bursts of each size and checks
// each decision.
package mapreuse

// Action is what to do with a map that has just emptied.
type Action uint8

const (
	// Keep the map as it is: it never grew past Big.
	Keep Action = iota
	// Clear the map and keep it: bursts past Big keep coming.
	Clear
	// Replace the map with a new one: it grew past Big once, and the
	// last fill was small or the first big one.
	Replace
)

// Tracker follows one map's size between the moments it empties. The zero
// Tracker has Big 0: every non-empty map counts as big; set Big first.
type Tracker struct {
	// Big is the size past which a map is big.
	Big int
	// peak is the largest size noted since the map was allocated (or
	// since Reset); fill the largest since it last emptied; noted is set
	// once a size was noted since then.
	peak, fill int
	noted      bool
	// lastBig is whether the fill before the last one passed Big.
	lastBig bool
}

// Note records the map's current size n; call it after inserting.
func (t *Tracker) Note(n int) {
	t.fill = max(t.fill, n)
	t.peak = max(t.peak, n)
	t.noted = true
}

// Emptied decides what to do with the map, which has just become empty.
// Calls with nothing noted since the last one return Keep, so a caller
// may call it each time it sees the map empty.
func (t *Tracker) Emptied() Action {
	if !t.noted {
		return Keep
	}
	big := t.fill > t.Big
	a := Replace
	switch {
	case t.peak <= t.Big:
		a = Keep
	case big && t.lastBig && 4*t.fill >= t.peak:
		a = Clear
	default:
		t.peak = 0
	}
	t.lastBig, t.fill, t.noted = big, 0, false
	return a
}

// Reset is for a map the owner allocated afresh (with room for a list, say):
// its history starts over.
func (t *Tracker) Reset() {
	*t = Tracker{Big: t.Big}
}

// Peak is the largest size noted since the map was allocated.
func (t *Tracker) Peak() int { return t.peak }
