package informer

import (
	"github.com/listwatch/listwatch/internal/mapreuse"
	"github.com/listwatch/listwatch/internal/ring"
)

// kind is the kind of a notification to a listener.
type kind uint8

const (
	// Added: the object appeared.
	noteAdded kind = iota + 1
	// Updated: the object changed; Old is the previous state.
	noteUpdated
	// Deleted: the object is gone; Object is its last known state.
	noteDeleted
	// Resynced: a resync replays Object unchanged (a relist that finds an
	// object unchanged makes one too).
	noteResynced
)

var kindNames = [...]string{"", "add", "update", "delete", "sync"}

func (k kind) String() string { return kindNames[k] }

// notification is one change handed from the informer to each listener.
type notification[T any] struct {
	kind kind
	// Key identifies the object (namespace/name); coalescing is per key.
	Key string
	// Object is the new state (the last known state for Deleted).
	Object T
	// Old is the previous state, for Updated only.
	Old T
	// InInitialList marks an Added from the initial list or a late-join replay.
	InInitialList bool
	// FinalStateUnknown marks a Deleted noticed by a relist.
	FinalStateUnknown bool
}

// pending is what a coalescing listener holds for one key: the state its
// handler has (before) and the newest state (after). Delivering it turns the
// difference into at most two handler calls.
//
// Invariants: hadBefore is fixed when the entry is created; deleted is
// meaningful only when wasDeleted; wasDeleted means a delete arrived after
// the handler last saw the key while hadBefore or an add in between was
// pending, so a later add is a re-creation, not an update.
type pending[T any] struct {
	before, after       T
	deleted             T
	hadBefore, hasAfter bool
	wasDeleted          bool
	finalStateUnknown   bool
	initial             bool
	// syncOnly marks an entry made only of resyncs: delivered as an update
	// from the object to itself.
	syncOnly bool
	// since is when the entry was created, in the listener clock's nanoseconds.
	since int64
}

// newPending starts an entry from the first notification for a key.
func newPending[T any](n *notification[T], now int64) pending[T] {
	p := pending[T]{since: now}
	switch n.kind {
	case noteAdded:
		p.after, p.hasAfter, p.initial = n.Object, true, n.InInitialList
	case noteUpdated:
		p.before, p.hadBefore, p.after, p.hasAfter = n.Old, true, n.Object, true
	case noteDeleted:
		p.before, p.hadBefore = n.Object, true
		p.deleted, p.wasDeleted, p.finalStateUnknown = n.Object, true, n.FinalStateUnknown
	case noteResynced:
		p.before, p.hadBefore, p.after, p.hasAfter, p.syncOnly = n.Object, true, n.Object, true, true
	}
	return p
}

// merge folds a later notification for the same key into p.
func (p *pending[T]) merge(n *notification[T]) {
	switch n.kind {
	case noteAdded:
		p.after, p.hasAfter, p.syncOnly = n.Object, true, false
		p.initial = n.InInitialList
	case noteUpdated:
		p.after, p.hasAfter, p.syncOnly = n.Object, true, false
	case noteDeleted:
		p.deleted, p.finalStateUnknown = n.Object, n.FinalStateUnknown
		p.wasDeleted = p.wasDeleted || p.hadBefore
		var zero T
		p.after, p.hasAfter, p.syncOnly = zero, false, false
	case noteResynced:
		// The newest state is already pending; a resync adds nothing.
	}
}

// object is the entry's newest known object: what its key is taken from.
func (p *pending[T]) object() T {
	switch {
	case p.hasAfter:
		return p.after
	case p.wasDeleted:
		return p.deleted
	}
	return p.before
}

// deliver makes the handler calls that bring the handler from before to
// after, returning how many it made.
func (p *pending[T]) deliver(h Handler[T]) int {
	switch {
	case !p.hadBefore && !p.hasAfter:
		return 0 // born and gone while the handler lagged
	case !p.hadBefore:
		h.OnAdd(p.after, p.initial)
		return 1
	case !p.hasAfter:
		h.OnDelete(p.deleted, p.finalStateUnknown)
		return 1
	case p.wasDeleted:
		h.OnDelete(p.deleted, p.finalStateUnknown)
		h.OnAdd(p.after, p.initial)
		return 2
	default:
		h.OnUpdate(p.before, p.after)
		return 1
	}
}

// buffer holds the notifications a listener's handler has not taken yet,
// one type per DeliveryMode: coalescing (Coalesce) or ordered (InOrder).
// A buffer is a plain data structure: the listener calls it under its
// lock, with times read from its clock, and runs the handler on what take
// returns.
//
// Arrivals are numbered: take returns each entry's number, and once the
// entry numbered lastSeq() at some moment has been delivered, so has
// everything that had arrived then.
type buffer[T any] interface {
	// add queues n, which arrived at since (nanoseconds of the listener's
	// clock).
	add(n *notification[T], since int64)
	// empty reports whether nothing waits.
	empty() bool
	// take removes the oldest entry and returns its key ("" if the buffer
	// does not keep keys: see orderedBuffer), its number, and the handler
	// calls to make (pending.deliver); ok is false when nothing waits.
	take() (key string, seq uint64, p pending[T], ok bool)
	// lastSeq is the number of the latest arrival.
	lastSeq() uint64
	// pending reports how many entries wait and when the oldest arrived.
	pending() (n int, oldest int64)
	// coalesced counts notifications merged into an entry already waiting.
	coalesced() int64
	// clear drops everything waiting.
	clear()
	// trim gives back the memory of a burst once nothing waits (Ring.Trim).
	trim()
}

// ringKeep is the size below which a buffer's rings no longer shrink. The
// rings are patient (ring.Ring.Patient), so that a listener whose buffer
// fills and empties with every burst does not reallocate it every time
// (the regrowth was about 4% of the CPU per event at a steady stream).
const ringKeep = 256

func newBuffer[T any](mode DeliveryMode) buffer[T] {
	if mode == InOrder {
		b := &orderedBuffer[T]{}
		b.notes = ring.Ring[orderedNote[T]]{Keep: ringKeep, Patient: true}
		b.runs = ring.Ring[arrivalRun]{Keep: ringKeep, Patient: true}
		return b
	}
	b := &coalescingBuffer[T]{entries: map[string]pending[T]{}, track: mapreuse.Tracker{Big: bigEntries}}
	b.keys = ring.Ring[queuedKey]{Keep: ringKeep, Patient: true}
	return b
}

// orderedBuffer keeps every notification, in arrival order (InOrder).
// Each is delivered unchanged: a pending made of one notification. A slow
// handler can leave a great many waiting, so a note holds only the objects
// and the kind: its number follows from its place (the newest is seq), the
// arrival times are kept per run of notes that arrived together, and the
// key is left out (take returns ""; the listener works it out from the
// object if a handler panics, the only use it has for it). A note takes 24
// bytes for a pointer T, 40 for an interface.
type orderedBuffer[T any] struct {
	notes ring.Ring[orderedNote[T]]
	seq   uint64
	// runs holds, oldest first, how many consecutive notes arrived at one
	// time: together they count every note in notes.
	runs ring.Ring[arrivalRun]
}

type orderedNote[T any] struct {
	obj, old T
	flags    noteFlags
}

// noteFlags packs a notification's kind and its two booleans.
type noteFlags uint8

const (
	kindMask      noteFlags = 7
	flagInitial   noteFlags = 8
	flagFinalUnkn noteFlags = 16
)

type arrivalRun struct {
	since int64
	n     int
}

func (b *orderedBuffer[T]) add(n *notification[T], since int64) {
	b.seq++
	f := noteFlags(n.kind)
	if n.InInitialList {
		f |= flagInitial
	}
	if n.FinalStateUnknown {
		f |= flagFinalUnkn
	}
	b.notes.Push(orderedNote[T]{obj: n.Object, old: n.Old, flags: f})
	if k := b.runs.Len(); k > 0 && b.runs.At(k-1).since == since {
		b.runs.At(k-1).n++
		return
	}
	b.runs.Push(arrivalRun{since: since, n: 1})
}

func (b *orderedBuffer[T]) empty() bool { return b.notes.Len() == 0 }

func (b *orderedBuffer[T]) take() (string, uint64, pending[T], bool) {
	if b.notes.Len() == 0 {
		return "", 0, pending[T]{}, false
	}
	seq := b.seq - uint64(b.notes.Len()) + 1
	q := b.notes.Pop()
	r := b.runs.Peek()
	since := r.since
	if r.n--; r.n == 0 {
		b.runs.Pop()
	}
	n := notification[T]{kind: kind(q.flags & kindMask), Object: q.obj, Old: q.old,
		InInitialList: q.flags&flagInitial != 0, FinalStateUnknown: q.flags&flagFinalUnkn != 0}
	return "", seq, newPending(&n, since), true
}

func (b *orderedBuffer[T]) lastSeq() uint64 { return b.seq }

func (b *orderedBuffer[T]) pending() (int, int64) {
	if b.notes.Len() == 0 {
		return 0, 0
	}
	return b.notes.Len(), b.runs.Peek().since
}

func (b *orderedBuffer[T]) coalesced() int64 { return 0 }

func (b *orderedBuffer[T]) trim() {
	b.notes.Trim()
	b.runs.Trim()
}

func (b *orderedBuffer[T]) clear() {
	b.notes.Clear()
	b.runs.Clear()
}

// coalescingBuffer keeps at most one pending entry per key, in order of
// the keys' first arrival (Coalesce). add only appends to unfolded: it
// touches one slot instead of a map that the listener's goroutine also
// uses, and the notifications are folded into entries (fold) before an
// entry is taken or counted, with the same result as folding on arrival.
// At most foldAt notifications wait unfolded, so memory stays bounded by
// the number of keys.
type coalescingBuffer[T any] struct {
	// keys holds, in first-arrival order, each key with an entry in
	// entries; every key in entries is in keys exactly once, numbered.
	keys    ring.Ring[queuedKey]
	entries map[string]pending[T]
	// track decides what becomes of entries each time it empties (a map
	// never shrinks; see mapreuse).
	track mapreuse.Tracker
	// unfolded holds the notifications not yet folded into entries, in
	// arrival order: fold consumes all of them at once, so it is a slice
	// reused from fold to fold (at most foldAt long), not a queue.
	unfolded []unfoldedNote[T]
	// seq numbers the entries as they are created; merged counts the
	// notifications folded into an existing entry.
	seq    uint64
	merged int64
}

type queuedKey struct {
	key string
	seq uint64
}

type unfoldedNote[T any] struct {
	n     notification[T]
	since int64
}

// foldAt is how many unfolded notifications a coalescing buffer holds
// before add folds them: as many as a buffer's rings keep, so that the
// slice kept for them pins no more than a ring would.
const foldAt = ringKeep

func (b *coalescingBuffer[T]) add(n *notification[T], since int64) {
	if len(b.unfolded) == cap(b.unfolded) {
		// Grow by doubling up to foldAt exactly (append would round up).
		grown := make([]unfoldedNote[T], len(b.unfolded), min(foldAt, max(16, 2*cap(b.unfolded))))
		copy(grown, b.unfolded)
		b.unfolded = grown
	}
	b.unfolded = append(b.unfolded, unfoldedNote[T]{n: *n, since: since})
	if len(b.unfolded) >= foldAt {
		b.fold()
	}
}

// fold merges the unfolded notifications into entries, in arrival order.
func (b *coalescingBuffer[T]) fold() {
	for i := range b.unfolded {
		q := &b.unfolded[i]
		n := &q.n
		if p, ok := b.entries[n.Key]; ok {
			p.merge(n)
			b.entries[n.Key] = p
			b.merged++
			continue
		}
		b.seq++
		b.entries[n.Key] = newPending(n, q.since)
		b.keys.Push(queuedKey{key: n.Key, seq: b.seq})
	}
	clear(b.unfolded) // folded notifications pin no objects
	b.unfolded = b.unfolded[:0]
	b.track.Note(len(b.entries))
}

func (b *coalescingBuffer[T]) empty() bool { return b.keys.Len() == 0 && len(b.unfolded) == 0 }

func (b *coalescingBuffer[T]) take() (string, uint64, pending[T], bool) {
	b.fold()
	if b.keys.Len() == 0 {
		return "", 0, pending[T]{}, false
	}
	qk := b.keys.Pop()
	p := b.entries[qk.key]
	delete(b.entries, qk.key)
	if len(b.entries) == 0 {
		b.resetEntries()
	}
	return qk.key, qk.seq, p, true
}

// bigEntries is the size past which an emptied entries map is replaced,
// unless the buffer keeps filling that much (mapreuse).
const bigEntries = 1024

// resetEntries settles the entries map, which has just emptied.
func (b *coalescingBuffer[T]) resetEntries() {
	switch b.track.Emptied() {
	case mapreuse.Clear:
		clear(b.entries)
	case mapreuse.Replace:
		b.entries = map[string]pending[T]{}
	}
}

func (b *coalescingBuffer[T]) lastSeq() uint64 {
	b.fold()
	return b.seq
}

func (b *coalescingBuffer[T]) pending() (int, int64) {
	b.fold()
	if b.keys.Len() == 0 {
		return 0, 0
	}
	return b.keys.Len(), b.entries[b.keys.Peek().key].since
}

func (b *coalescingBuffer[T]) coalesced() int64 {
	b.fold()
	return b.merged
}

func (b *coalescingBuffer[T]) trim() { b.keys.Trim() }

func (b *coalescingBuffer[T]) clear() {
	b.keys.Clear()
	b.unfolded = nil
	clear(b.entries)
}
