package deltafifo

import (
	"github.com/listwatch/listwatch/store"
)

// KnownObjects is what a FIFO needs from the consumer's store: the keys it
// holds and the object under a key. The consumer usually updates that store
// from its process function, which runs under the FIFO's lock, so the FIFO
// and the store never disagree during Replace or Resync.
type KnownObjects[T any] interface {
	// ListKeys returns every key in the store.
	ListKeys() []string
	// GetByKey returns the object stored under key and whether there was one.
	GetByKey(key string) (T, bool)
}

// Metrics receives counters from a FIFO. Its methods are called with the
// FIFO's lock held and must be fast and must not call back into the FIFO.
type Metrics interface {
	// Depth reports the number of queued keys (coalescing mode) or events
	// (in-order mode) after every change.
	Depth(n int)
	// Rejected counts a call refused because of an invalid object or a
	// failed transform. Nothing is queued by such a call.
	Rejected()
}

// Options configures New. The zero value is a valid coalescing FIFO keyed by
// store.NamespacedKey.
type Options[T store.Object] struct {
	// Name identifies the FIFO in logs. Default "DeltaFIFO".
	Name string
	// KeyFunc computes an object's key. Default store.NamespacedKey, or
	// store.MetaNamespaceKey with NamelessKeys.
	KeyFunc store.KeyFunc[T]
	// NamelessKeys keys objects without a name as client-go does
	// (store.Options.NamelessKeys) and accepts the key "" from KeyFunc,
	// where the FIFO otherwise refuses both as invalid objects.
	NamelessKeys bool
	// KnownObjects is the consumer's store. When set, Replace queues
	// deletions for its keys missing from the new list, Resync queues Sync
	// deltas for its objects, and Delete of a key it holds is queued even
	// when the FIFO holds nothing for the key. May be nil.
	KnownObjects KnownObjects[T]
	// Transform, if set, is applied to every object entering the FIFO
	// through Add, Update, Delete and Replace (not to Sync deltas and not to
	// objects that Replace takes from the queue or KnownObjects). It may
	// modify the object in place. An error refuses the whole call.
	Transform func(T) (T, error)
	// InOrder selects in-order mode: every call produces its own event, and
	// events are popped one at a time in arrival order with no per-key
	// coalescing (client-go's RealFIFO). Default false: per-key coalescing
	// (client-go's DeltaFIFO).
	InOrder bool
	// MaxBatch caps the number of keys PopBatch hands over at once.
	// Default 1000.
	MaxBatch int
	// ListMarks makes the FIFO a pure queue for a consumer that keeps its
	// own store and deletes what a relist lacks itself (the informer):
	// Replace, ReplacePage and ReplaceEnd queue the list's objects between
	// a [ListBegin] and a [ListEnd] item that [FIFO.PopBatch] hands over in
	// queue order, and the FIFO never reads the consumer's store. It
	// queues the final-state-unknown deletion only of keys it holds itself
	// when a list begins; Delete queues every deletion (the consumer knows
	// whether the key exists). Writes and lists never wait for a batch
	// being applied. KnownObjects is ignored, and only PopBatch may pop
	// (Pop returns [ErrListMarksNeedBatch]). HasSynced turns true once the
	// first ListEnd has been processed.
	ListMarks bool
	// MarkPositions, with ListMarks, makes each list's [ListBegin] a
	// position in the queue rather than a flag on the next batch: what
	// was queued before the list began is handed out before its
	// ListBegin, in earlier batches (an entry is sealed then: a later
	// write to its key, or the list itself, starts a new entry after the
	// mark), and a ListBegin is always the first item of its batch (but
	// see WholeLists). The FIFO then queues no deletions of its own: the
	// consumer's deletion at the [ListEnd] of everything it has neither
	// written nor kept since the ListBegin is the list's one deletion set.
	MarkPositions bool
	// WholeLists, with ListMarks, hands a list queued by one Replace to
	// PopBatch in one batch, from its ListBegin to its ListEnd, however
	// many keys it holds: a consumer that applies a batch atomically then
	// applies each relist atomically too. With MarkPositions, such a
	// batch goes on past a later list's ListBegin when that list voided
	// its ListEnd, so a key may appear twice in it.
	WholeLists bool
	// Metrics, if set, receives depth and rejection counts.
	Metrics Metrics
}

const defaultMaxBatch = 1000
