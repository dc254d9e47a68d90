package deltafifo

import "github.com/listwatch/listwatch/internal/ring"

// event is one queued change in in-order mode; a list-mark sentinel has
// no delta type (see markKeys).
type event[T any] struct {
	key string
	d   Delta[T]
}

// isMark reports whether ev is a list-mark sentinel.
func (ev *event[T]) isMark() bool { return ev.d.Type == 0 }

// ordered queues every change as its own event and hands them out in
// arrival order (client-go's RealFIFO). It is the queue of in-order mode.
type ordered[T any] struct {
	// events holds the queued events, oldest first.
	events ring.Ring[event[T]]
	// one is Pop's reusable one-delta slice; zero between calls.
	one [1]Delta[T]
	// seen and batchDeltas are PopBatch's reusable scratch space; seen is
	// empty and batchDeltas zeroed between calls.
	seen        map[string]struct{}
	batchDeltas []Delta[T]
	// taken is the number of batchDeltas in use by the running batch.
	taken int
}

func (q *ordered[T]) len() int { return q.events.Len() }

func (q *ordered[T]) reserve(n int) { q.events.Reserve(n) }

// push queues d as a new event; every event is a new element.
func (q *ordered[T]) push(key string, d Delta[T]) bool {
	q.events.Push(event[T]{key, d})
	return true
}

// skipsDeletes is false: every deletion is an event of its own.
func (q *ordered[T]) skipsDeletes() bool { return false }

func (q *ordered[T]) skipDelete(string, knownSource[T]) bool { return false }

// listType is always Replaced, as in client-go's RealFIFO.
func (q *ordered[T]) listType(DeltaType) DeltaType { return Replaced }

func (q *ordered[T]) deletionsFirst() bool { return true }

// replace queues a whole list: first a final-state-unknown deletion for
// every queued key (unless its last event is already a deletion) and every
// known key that the list lacks, then a Replaced event for every listed
// object.
func (q *ordered[T]) replace(keys []string, deltas []Delta[T], known knownSource[T], lookup func(string) T) {
	listed := make(map[string]struct{}, len(keys))
	for _, key := range keys {
		listed[key] = struct{}{}
	}
	last := make(map[string]int)
	var queued []string
	for i := 0; i < q.events.Len(); i++ {
		key := q.events.At(i).key
		if _, ok := last[key]; !ok {
			queued = append(queued, key)
		}
		last[key] = i
	}
	for _, key := range queued {
		if _, ok := listed[key]; ok {
			continue
		}
		if d := q.events.At(last[key]).d; d.Type != Deleted {
			q.events.Push(event[T]{key, Delta[T]{Object: d.Object, Type: Deleted, FinalStateUnknown: true}})
		}
	}
	if known != nil {
		for _, key := range known.ListKeys() {
			_, isListed := listed[key]
			_, isQueued := last[key]
			if isListed || isQueued {
				continue
			}
			q.events.Push(event[T]{key, Delta[T]{Object: lookup(key), Type: Deleted, FinalStateUnknown: true}})
		}
	}
	q.events.Reserve(len(keys))
	for i, key := range keys {
		q.events.Push(event[T]{key, deltas[i]})
	}
}

// resync queues a Sync event for every known object that has no queued
// event.
func (q *ordered[T]) resync(known knownSource[T], lookup func(string) (T, bool)) {
	queued := make(map[string]struct{}, q.events.Len())
	for i := 0; i < q.events.Len(); i++ {
		queued[q.events.At(i).key] = struct{}{}
	}
	for _, key := range known.ListKeys() {
		if _, ok := queued[key]; ok {
			continue
		}
		if obj, ok := lookup(key); ok {
			q.events.Push(event[T]{key, Delta[T]{Object: obj, Type: Sync}})
		}
	}
}

// scan calls fn for every queued event.
func (q *ordered[T]) scan(fn func(key string, last Delta[T])) {
	for i := 0; i < q.events.Len(); i++ {
		if ev := q.events.At(i); !ev.isMark() {
			fn(ev.key, ev.d)
		}
	}
}

// deleteUnlisted queues a final-state-unknown deletion after the last
// event of each queued key of keys, unless that event is a deletion; see
// queue.
func (q *ordered[T]) deleteUnlisted(keys []string, orElse func(string) bool) int {
	lastEvent := make(map[string]int)
	for i := 0; i < q.events.Len(); i++ {
		lastEvent[q.events.At(i).key] = i
	}
	deletions := 0
	for _, key := range keys {
		i, ok := lastEvent[key]
		if !ok {
			if orElse(key) {
				deletions++
			}
			continue
		}
		last := q.events.At(i).d
		if last.Type == Deleted {
			continue
		}
		q.events.Push(event[T]{key, Delta[T]{Object: last.Object, Type: Deleted, FinalStateUnknown: true}})
		deletions++
	}
	return deletions
}

// pushEnd queues a ListEnd sentinel: an event with no delta type.
func (q *ordered[T]) pushEnd() { q.events.Push(event[T]{key: markKeys[ListEnd]}) }

// pushBegin queues a ListBegin sentinel. Every event is sealed already: a
// later one is a new element.
func (q *ordered[T]) pushBegin() { q.events.Push(event[T]{key: markKeys[ListBegin]}) }

func (q *ordered[T]) headMark() ListMark {
	if head := q.events.At(0); head.isMark() {
		return markOf(head.key)
	}
	return NoMark
}

func (q *ordered[T]) headIsEnd() bool { return q.headMark() == ListEnd }

func (q *ordered[T]) popEnd() { q.events.Pop() }

// pop hands the oldest event to process as a one-delta slice.
func (q *ordered[T]) pop(process ProcessFunc[T], initial bool) error {
	ev := q.events.Pop()
	q.one[0] = ev.d
	err := process(ev.key, q.one[:], initial)
	q.one[0] = Delta[T]{}
	return err
}

// beginBatch readies the scratch space for a batch of up to limit events.
func (q *ordered[T]) beginBatch(limit int) {
	if q.seen == nil {
		q.seen = make(map[string]struct{})
	}
	if cap(q.batchDeltas) < limit {
		q.batchDeltas = make([]Delta[T], limit)
	}
}

// takeItem moves the oldest event into the batch, unless its key is in the
// batch already and allowDup is false.
func (q *ordered[T]) takeItem(allowDup bool) (Item[T], bool) {
	key := q.events.At(0).key
	if _, dup := q.seen[key]; dup && !allowDup {
		return Item[T]{}, false
	}
	q.seen[key] = struct{}{}
	i := q.taken
	q.batchDeltas[i] = q.events.Pop().d
	q.taken++
	return Item[T]{Key: key, Deltas: q.batchDeltas[i : i+1 : i+1]}, true
}

func (q *ordered[T]) endBatch() {
	clear(q.seen)
	clear(q.batchDeltas[:q.taken])
	q.taken = 0
}
