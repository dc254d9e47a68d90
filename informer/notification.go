package informer

// Kind is the kind of a notification to a listener.
type Kind uint8

const (
	// Added: the object appeared.
	Added Kind = iota + 1
	// Updated: the object changed; Old is the previous state.
	Updated
	// Deleted: the object is gone; Object is its last known state.
	Deleted
	// Synced: a resync replays Object unchanged.
	Synced
)

var kindNames = [...]string{"", "add", "update", "delete", "sync"}

func (k Kind) String() string { return kindNames[k] }

// Notification is one change handed from the informer to each listener.
type Notification[T any] struct {
	Kind Kind
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
func newPending[T any](n *Notification[T], now int64) pending[T] {
	p := pending[T]{since: now}
	switch n.Kind {
	case Added:
		p.after, p.hasAfter, p.initial = n.Object, true, n.InInitialList
	case Updated:
		p.before, p.hadBefore, p.after, p.hasAfter = n.Old, true, n.Object, true
	case Deleted:
		p.before, p.hadBefore = n.Object, true
		p.deleted, p.wasDeleted, p.finalStateUnknown = n.Object, true, n.FinalStateUnknown
	case Synced:
		p.before, p.hadBefore, p.after, p.hasAfter, p.syncOnly = n.Object, true, n.Object, true, true
	}
	return p
}

// merge folds a later notification for the same key into p.
func (p *pending[T]) merge(n *Notification[T]) {
	switch n.Kind {
	case Added:
		p.after, p.hasAfter, p.syncOnly = n.Object, true, false
		p.initial = n.InInitialList
	case Updated:
		p.after, p.hasAfter, p.syncOnly = n.Object, true, false
	case Deleted:
		p.deleted, p.finalStateUnknown = n.Object, n.FinalStateUnknown
		p.wasDeleted = p.wasDeleted || p.hadBefore
		var zero T
		p.after, p.hasAfter, p.syncOnly = zero, false, false
	case Synced:
		// The newest state is already pending; a resync adds nothing.
	}
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

// deliverOne hands a single notification to h unchanged (in-order mode).
func deliverOne[T any](n *Notification[T], h Handler[T]) {
	switch n.Kind {
	case Added:
		h.OnAdd(n.Object, n.InInitialList)
	case Updated:
		h.OnUpdate(n.Old, n.Object)
	case Deleted:
		h.OnDelete(n.Object, n.FinalStateUnknown)
	case Synced:
		h.OnUpdate(n.Object, n.Object)
	}
}
