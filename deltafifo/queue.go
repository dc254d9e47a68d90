package deltafifo

import "github.com/listwatch/listwatch/internal/ring"

// queue is how one FIFO mode holds what is queued: the coalescer
// (coalesce.go, client-go's DeltaFIFO) or the ordered queue (ordered.go,
// client-go's RealFIFO). The core (locking, HasSynced, paged lists, list
// marks, batches handed out without the lock) is the same for both and
// never asks which mode it runs; each mode is a plain data structure,
// tested alone without goroutines.
//
// An element is a key with its deltas (coalescing) or one event (in order),
// or a ListBegin or ListEnd sentinel (list marks; ListBegin only with mark
// positions). The core holds its lock around every
// call.
type queue[T any] interface {
	// len is the number of queued elements, ListEnd sentinels included.
	len() int
	// reserve makes room for n more elements (a list's objects).
	reserve(n int)
	// push queues d for key; it reports whether key had nothing queued
	// (always, in order mode), so that a list counts its new elements.
	push(key string, d Delta[T]) (fresh bool)

	// skipsDeletes reports whether the mode drops a deletion that would
	// report nothing new; such a mode asks the known store (skipDelete).
	skipsDeletes() bool
	// skipDelete reports whether a deletion of key would report nothing
	// new: nothing is queued for it and known (if not nil) does not hold
	// it. Always false in a mode that does not skip deletions.
	skipDelete(key string, known knownSource[T]) bool
	// listType is the delta type of listed objects, given the configured
	// one.
	listType(configured DeltaType) DeltaType
	// deletionsFirst reports whether a whole list queues its deletions
	// before its objects (in order, as client-go's RealFIFO does) rather
	// than after (coalescing).
	deletionsFirst() bool

	// replace queues a whole list, without list marks: a delta per listed
	// object, and a final-state-unknown deletion for every queued key the
	// list lacks and every key of known (if not nil) neither listed nor
	// queued, whose object lookup gives.
	replace(keys []string, deltas []Delta[T], known knownSource[T], lookup func(key string) T)
	// resync queues a Sync delta, with the object lookup gives (if it
	// can), for every key of known that has nothing queued.
	resync(known knownSource[T], lookup func(key string) (T, bool))
	// scan calls fn for the queued elements in queue order, sentinels
	// skipped; the last call for a key carries its last queued
	// delta.
	scan(fn func(key string, last Delta[T]))
	// deleteUnlisted queues, for each of keys in turn (each at most once),
	// a final-state-unknown deletion carrying the object of the key's
	// last queued delta, unless that delta is a deletion; for a key with
	// nothing queued it calls orElse, which may push and reports whether
	// it did. It returns how many deletions were queued.
	deleteUnlisted(keys []string, orElse func(key string) bool) int

	// pushEnd queues a ListEnd sentinel, pushBegin a ListBegin one (mark
	// positions), which seals the elements before it: a later push for
	// one of their keys starts a new element after the mark (coalescing:
	// a second entry for the key). headMark reports which sentinel the
	// oldest element (there must be one) is, NoMark for a key (an event);
	// headIsEnd whether it is a ListEnd. popEnd removes that sentinel,
	// whichever it is.
	pushEnd()
	pushBegin()
	headMark() ListMark
	headIsEnd() bool
	popEnd()

	// pop removes the oldest element and hands its key and deltas to
	// process; the deltas are reused once process returns.
	pop(process ProcessFunc[T], initial bool) error
	// beginBatch readies a batch of up to limit elements; takeItem moves
	// the oldest element, which is not a sentinel, into the batch, unless
	// the mode ends a batch before a key it holds (in order mode, unless
	// allowDup); endBatch recycles the batch's memory once its items are
	// no longer used.
	beginBatch(limit int)
	takeItem(allowDup bool) (Item[T], bool)
	endBatch()
}

var (
	_ queue[int] = (*coalescer[int])(nil)
	_ queue[int] = (*ordered[int])(nil)
)

// newQueue returns the queue of the chosen mode.
func newQueue[T any](inOrder bool) queue[T] {
	if inOrder {
		q := &ordered[T]{}
		q.events = patientRing[event[T]]()
		return q
	}
	return newCoalescer[T]()
}

// patientRing returns an empty ring for a queue's order: it keeps room for
// a default batch and shrinks only after a whole ring of pops at low
// occupancy (ring.Ring.Patient), so that a queue which fills with each
// watch burst and empties with each PopBatch does not reallocate its ring
// every time (the regrowth was 4% of the informer's CPU per event).
func patientRing[E any]() ring.Ring[E] {
	return ring.Ring[E]{Keep: defaultMaxBatch, Patient: true}
}

// markKeys is the key a list-mark sentinel carries in a queue, where it is
// an element with no entry (coalescing) or no delta type (in order).
var markKeys = [...]string{ListBegin: "begin", ListEnd: "end"}

// markOf returns the mark of a sentinel whose key is key.
func markOf(key string) ListMark {
	if key == markKeys[ListBegin] {
		return ListBegin
	}
	return ListEnd
}
