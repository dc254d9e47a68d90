package deltafifo

// DeltaType says what kind of change a Delta records.
type DeltaType uint8

// The delta types. The zero value is not a valid DeltaType.
const (
	// Added records that an object was created.
	Added DeltaType = iota + 1
	// Updated records that an object changed.
	Updated
	// Deleted records that an object was removed. When FinalStateUnknown is
	// set, the deletion was inferred by Replace and Object may be stale or
	// the zero value.
	Deleted
	// Replaced records that a relist (Replace) reported the object. It may
	// or may not differ from the last state seen.
	Replaced
	// Sync records a periodic resync of an object already known to the
	// consumer; the object itself did not necessarily change.
	Sync
)

var deltaTypeNames = [...]string{
	Added:    "Added",
	Updated:  "Updated",
	Deleted:  "Deleted",
	Replaced: "Replaced",
	Sync:     "Sync",
}

// String returns the type's name, e.g. "Added".
func (t DeltaType) String() string {
	if int(t) < len(deltaTypeNames) && deltaTypeNames[t] != "" {
		return deltaTypeNames[t]
	}
	return "DeltaType(invalid)"
}

// Delta is one change to one object.
//
// For every type but Deleted, Object is the object's state after the change.
// For Deleted it is the last state seen before the deletion; if
// FinalStateUnknown is true, that state came from the queue or the known
// objects rather than from a watch event, so it may be stale, and it is the
// zero value when nothing was known at all.
type Delta[T any] struct {
	// Object is the object as of this change (see the type doc for Deleted).
	Object T
	// Type is the kind of change; never the zero value.
	Type DeltaType
	// FinalStateUnknown is true only for a Deleted delta that Replace
	// synthesised for a key the new list no longer contains. It replaces
	// client-go's DeletedFinalStateUnknown wrapper, so Object keeps type T.
	FinalStateUnknown bool
}

// Item is one key's deltas as handed to a batch process function, or, in
// a FIFO with [Options.ListMarks], a list boundary.
type Item[T any] struct {
	// Key is the object's key as computed by the FIFO's key function; ""
	// for a list boundary.
	Key string
	// Deltas holds the key's changes, oldest first; never empty for a key,
	// empty for a list boundary. It is only valid during the call that
	// received it: the FIFO reuses the memory.
	Deltas []Delta[T]
	// List is [NoMark] for a key's deltas, or the boundary this item is.
	List ListMark
	// ResourceVersion is the list's resource version on a [ListEnd] item,
	// as given to Replace or ReplaceEnd, and the resource version applied
	// on a [ListProgress] item; "" otherwise.
	ResourceVersion string
}

// ListMark says which list boundary an [Item] is. Only a FIFO with
// [Options.ListMarks] hands them out.
type ListMark uint8

const (
	// NoMark: the item is a key's deltas.
	NoMark ListMark = iota
	// ListBegin: a list has begun. It is the first item of its batch, and
	// everything the consumer applies from it on is newer than the list's
	// start: the consumer opens its replace session here. Two lists begun
	// with no batch in between share one ListBegin; with
	// [Options.MarkPositions] each has its own, at its place in the queue
	// (a whole list's batch may go on past a later one's).
	ListBegin
	// ListEnd: the list begun at the last ListBegin is complete. It is
	// the last item of its batch. Every key the FIFO held when the list
	// began and that the list lacks has had its final-state-unknown
	// deletion delivered before it (with [Options.MarkPositions], those
	// keys came before the ListBegin instead); whatever else the consumer
	// holds that it has neither written nor kept since the ListBegin is
	// gone from the server, and the consumer deletes it. A list begun
	// while an earlier one's end was still queued supersedes it: only the
	// later ListEnd is delivered.
	ListEnd
	// ListProgress: everything queued so far has been handed over, this
	// batch included, and the last resource version queued with it (of a
	// write, a list's end or a [FIFO.Progress] call) is ResourceVersion:
	// once the consumer has applied the batch, its store reflects that
	// resource version. It is the last item of the batch that empties the
	// queue, and comes only when that resource version changed since the
	// last ListProgress. Writes queued while a list is queued a page at a
	// time do not count (the list is not applied until its end).
	ListProgress
)

// ProcessFunc handles the deltas of one key popped from a FIFO. The deltas
// slice is only valid during the call: copy it (or the objects) to keep it.
// isInInitialList is true while the FIFO has not yet delivered every item of
// the first Replace.
type ProcessFunc[T any] func(key string, deltas []Delta[T], isInInitialList bool) error

// BatchFunc handles several keys popped from a FIFO at once. Keys in a batch
// are distinct, except in a whole list's batch ([Options.WholeLists]) in
// in-order mode or with [Options.MarkPositions]. The items slice and the
// deltas in it are only valid during the call.
type BatchFunc[T any] func(items []Item[T], isInInitialList bool) error
