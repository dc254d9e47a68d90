package deltafifo

import (
	"github.com/listwatch/listwatch/internal/mapreuse"
	"github.com/listwatch/listwatch/internal/ring"
)

// entry is the pending deltas of one key in coalescing mode.
type entry[T any] struct {
	// deltas is non-empty while the entry is in coalescer.items, oldest
	// first, with no two consecutive Deleted deltas.
	deltas []Delta[T]
	// gen is the coalescer.gen of the last Replace that listed the key
	// (without list marks), or the coalescer.gen when the entry was
	// created (with mark positions: the ListBegin marks queued before it).
	gen uint64
	// inline backs deltas until a key has more than one delta, so the
	// common single-delta key costs no separate allocation.
	inline [1]Delta[T]
}

// queued is one element of coalescer.order.
type queued[T any] struct {
	key string
	e   *entry[T]
}

// coalescer accumulates deltas per key and hands keys out in the order they
// were first queued (client-go's DeltaFIFO). It is the queue of coalescing
// mode, and the drop-in uses it directly.
type coalescer[T any] struct {
	// items maps each queued key to its newest entry; a key is in items if
	// and only if it is in order.
	items map[string]*entry[T]
	// order holds the queued keys with their entries, oldest first, and
	// the list-mark sentinels (no entry; see markKeys). A key appears once
	// (order[i].e == items[order[i].key]) unless sealing: then once per
	// ListBegin mark it has entries on both sides of, the last being in
	// items.
	order ring.Ring[queued[T]]
	// free holds recycled entries with empty, zeroed delta slices.
	free []*entry[T]
	// slab is a block of never-used entries that new entries are carved
	// from, to allocate entries in groups rather than one by one.
	slab []entry[T]
	// pending is how many more entries reserve expects; it makes the next
	// slabs larger (up to maxSlab) during a big Replace.
	pending int
	// taken holds the entries handed to a running batch process function;
	// empty between calls.
	taken []*entry[T]
	// gen counts Replace calls, or ListBegin marks when sealing; see
	// entry.gen.
	gen uint64
	// sealing is set by the first ListBegin mark (mark positions): an
	// entry of an older gen takes no more deltas.
	sealing bool
	// track decides what becomes of items each time it empties (a map
	// never shrinks; see mapreuse).
	track mapreuse.Tracker
}

const (
	// slabSize bounds what a few long-lived entries can pin: a block stays
	// alive while any of its entries is queued or in the free list.
	slabSize       = 32
	maxSlab        = 1024
	maxFreeEntries = 1024
	maxReusedCap   = 64
	bigMap         = 4096
)

func newCoalescer[T any]() *coalescer[T] {
	return &coalescer[T]{items: make(map[string]*entry[T]), order: patientRing[queued[T]](), track: mapreuse.Tracker{Big: bigMap}}
}

func (q *coalescer[T]) len() int { return q.order.Len() }

// push appends d to key's deltas; see add.
func (q *coalescer[T]) push(key string, d Delta[T]) bool {
	e := q.entry(key)
	fresh := len(e.deltas) == 0
	e.append(d)
	return fresh
}

func (q *coalescer[T]) skipsDeletes() bool { return true }

func (q *coalescer[T]) listType(configured DeltaType) DeltaType { return configured }

func (q *coalescer[T]) deletionsFirst() bool { return false }

// entry returns key's entry, creating and queueing one if needed.
func (q *coalescer[T]) entry(key string) *entry[T] {
	if e, ok := q.items[key]; ok && (e.gen == q.gen || !q.sealing) {
		return e
	}
	var e *entry[T]
	if n := len(q.free); n > 0 {
		e = q.free[n-1]
		q.free[n-1] = nil
		q.free = q.free[:n-1]
	} else {
		if len(q.slab) == 0 {
			size := slabSize
			if q.pending > slabSize {
				size = min(q.pending, maxSlab)
				q.pending -= size
			}
			q.slab = make([]entry[T], size)
		}
		e = &q.slab[0]
		q.slab = q.slab[1:]
		e.deltas = e.inline[:0]
	}
	e.gen = q.gen
	q.items[key] = e
	q.order.Push(queued[T]{key, e})
	q.track.Note(len(q.items))
	return e
}

// add appends d to key's deltas. Two deletions in a row collapse into one:
// the older is kept unless its final state was unknown.
func (q *coalescer[T]) add(key string, d Delta[T]) {
	q.entry(key).append(d)
}

func (e *entry[T]) append(d Delta[T]) {
	if n := len(e.deltas); n > 0 && d.Type == Deleted {
		if last := &e.deltas[n-1]; last.Type == Deleted {
			if last.FinalStateUnknown {
				*last = d
			}
			return
		}
	}
	e.deltas = append(e.deltas, d)
}

// skipDelete reports whether a deletion of key would report nothing new:
// the FIFO holds nothing for the key and neither does the known store.
func (q *coalescer[T]) skipDelete(key string, known knownSource[T]) bool {
	if _, queued := q.items[key]; queued {
		return false
	}
	if known == nil {
		return true
	}
	_, exists, err := known.GetByKey(key)
	return err == nil && !exists
}

// take removes the oldest key from the queue and returns it with its entry.
// The queue must not be empty. The caller must recycle the entry.
func (q *coalescer[T]) take() (string, *entry[T]) {
	head := q.order.Pop()
	if head.e.gen == q.gen || !q.sealing || q.items[head.key] == head.e {
		delete(q.items, head.key) // not a sealed entry with a newer one
	}
	return head.key, head.e
}

// recycle clears e and keeps it for reuse if it is small.
func (q *coalescer[T]) recycle(e *entry[T]) {
	clear(e.deltas)
	e.deltas, e.gen = e.deltas[:0], 0
	if cap(e.deltas) <= maxReusedCap && len(q.free) < maxFreeEntries {
		q.free = append(q.free, e)
	}
	if len(q.items) == 0 {
		switch q.track.Emptied() {
		case mapreuse.Clear:
			clear(q.items)
		case mapreuse.Replace:
			q.items = make(map[string]*entry[T])
		}
	}
}

// reserve makes room for n more keys at once, so that a large Replace does
// not rehash and copy the map and the ring repeatedly.
func (q *coalescer[T]) reserve(n int) {
	if len(q.items) == 0 && n > 64 {
		q.items = make(map[string]*entry[T], n)
		q.track.Reset()
	}
	q.order.Reserve(n)
	q.pending = n - len(q.free) - len(q.slab)
}

// replace queues a whole list: a delta of the list's type for every listed
// object, then a final-state-unknown deletion for every queued key and
// every known key the list lacks. Every queued key ends up either listed
// or deleted.
func (q *coalescer[T]) replace(keys []string, deltas []Delta[T], known knownSource[T], lookup func(string) T) {
	q.reserve(len(keys))
	q.gen++
	for i, key := range keys {
		e := q.entry(key)
		e.gen = q.gen
		e.append(deltas[i])
	}
	for i := 0; i < q.order.Len(); i++ {
		e := q.order.At(i).e
		if e.gen == q.gen {
			continue
		}
		last := e.deltas[len(e.deltas)-1].Object
		e.append(Delta[T]{Object: last, Type: Deleted, FinalStateUnknown: true})
	}
	if known != nil {
		for _, key := range known.ListKeys() {
			if _, queued := q.items[key]; queued {
				continue
			}
			q.add(key, Delta[T]{Object: lookup(key), Type: Deleted, FinalStateUnknown: true})
		}
	}
}

// resync queues a Sync delta for every known object whose key is not
// queued already.
func (q *coalescer[T]) resync(known knownSource[T], lookup func(string) (T, bool)) {
	for _, key := range known.ListKeys() {
		if _, queued := q.items[key]; queued {
			continue
		}
		if obj, ok := lookup(key); ok {
			q.add(key, Delta[T]{Object: obj, Type: Sync})
		}
	}
}

// scan calls fn for every queued entry with its last delta.
func (q *coalescer[T]) scan(fn func(key string, last Delta[T])) {
	for i := 0; i < q.order.Len(); i++ {
		if el := q.order.At(i); el.e != nil {
			fn(el.key, el.e.deltas[len(el.e.deltas)-1])
		}
	}
}

// deleteUnlisted appends a final-state-unknown deletion to each queued key
// of keys whose last delta is not one; see queue.
func (q *coalescer[T]) deleteUnlisted(keys []string, orElse func(string) bool) int {
	deletions := 0
	for _, key := range keys {
		e, ok := q.items[key]
		if !ok {
			if orElse(key) {
				deletions++
			}
			continue
		}
		last := e.deltas[len(e.deltas)-1]
		if last.Type == Deleted {
			continue
		}
		e.append(Delta[T]{Object: last.Object, Type: Deleted, FinalStateUnknown: true})
		deletions++
	}
	return deletions
}

// pushEnd queues a ListEnd sentinel: an element with no entry.
func (q *coalescer[T]) pushEnd() { q.order.Push(queued[T]{key: markKeys[ListEnd]}) }

// pushBegin queues a ListBegin sentinel and starts a new gen, sealing
// every entry queued so far.
func (q *coalescer[T]) pushBegin() {
	q.gen++
	q.sealing = true
	q.order.Push(queued[T]{key: markKeys[ListBegin]})
}

func (q *coalescer[T]) headMark() ListMark {
	if head := q.order.At(0); head.e == nil {
		return markOf(head.key)
	}
	return NoMark
}

func (q *coalescer[T]) headIsEnd() bool { return q.headMark() == ListEnd }

func (q *coalescer[T]) popEnd() { q.order.Pop() }

// pop hands the oldest key's deltas to process.
func (q *coalescer[T]) pop(process ProcessFunc[T], initial bool) error {
	key, e := q.take()
	err := process(key, e.deltas, initial)
	q.recycle(e)
	return err
}

func (q *coalescer[T]) beginBatch(int) {}

// takeItem moves the oldest key into the batch; its entry is recycled by
// endBatch. A key is never repeated in a batch, so it never refuses.
func (q *coalescer[T]) takeItem(bool) (Item[T], bool) {
	key, e := q.take()
	q.taken = append(q.taken, e)
	return Item[T]{Key: key, Deltas: e.deltas}, true
}

func (q *coalescer[T]) endBatch() {
	for i, e := range q.taken {
		q.recycle(e)
		q.taken[i] = nil
	}
	q.taken = q.taken[:0]
}
