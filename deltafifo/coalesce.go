package deltafifo

// entry is the pending deltas of one key in coalescing mode.
type entry[T any] struct {
	// deltas is non-empty while the entry is in coalescer.items, oldest
	// first, with no two consecutive Deleted deltas.
	deltas []Delta[T]
	// gen is the coalescer.gen of the last Replace that listed the key.
	gen uint64
}

// coalescer accumulates deltas per key and hands keys out in the order they
// were first queued (client-go's DeltaFIFO).
type coalescer[T any] struct {
	// items maps each queued key to its entry; a key is in items if and only
	// if it is in order.
	items map[string]*entry[T]
	// order holds the queued keys, oldest first, without duplicates.
	order ring[string]
	// free holds recycled entries with empty, zeroed delta slices.
	free []*entry[T]
	// taken holds the entries handed to a running batch process function;
	// empty between calls.
	taken []*entry[T]
	// gen counts Replace calls; see entry.gen.
	gen uint64
	// peak is the largest len(items) since items was last allocated; a map
	// never shrinks, so an emptied map that grew large is replaced.
	peak int
}

const (
	maxFreeEntries = 1024
	maxReusedCap   = 64
	bigMap         = 4096
)

// entry returns key's entry, creating and queueing one if needed.
func (q *coalescer[T]) entry(key string) *entry[T] {
	if e, ok := q.items[key]; ok {
		return e
	}
	var e *entry[T]
	if n := len(q.free); n > 0 {
		e = q.free[n-1]
		q.free[n-1] = nil
		q.free = q.free[:n-1]
	} else {
		e = new(entry[T])
	}
	q.items[key] = e
	q.order.push(key)
	q.peak = max(q.peak, len(q.items))
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
	key := q.order.pop()
	e := q.items[key]
	delete(q.items, key)
	return key, e
}

// recycle clears e and keeps it for reuse if it is small.
func (q *coalescer[T]) recycle(e *entry[T]) {
	clear(e.deltas)
	e.deltas, e.gen = e.deltas[:0], 0
	if cap(e.deltas) <= maxReusedCap && len(q.free) < maxFreeEntries {
		q.free = append(q.free, e)
	}
	if len(q.items) == 0 && q.peak > bigMap {
		q.items, q.peak = make(map[string]*entry[T]), 0
	}
}
