package deltafifo

// event is one queued change in in-order mode.
type event[T any] struct {
	key string
	d   Delta[T]
}

// ordered queues every change as its own event and hands them out in
// arrival order (client-go's RealFIFO).
type ordered[T any] struct {
	// events holds the queued events, oldest first.
	events ring[event[T]]
	// one is Pop's reusable one-delta slice; zero between calls.
	one [1]Delta[T]
	// seen and batchDeltas are PopBatch's reusable scratch space; seen is
	// empty and batchDeltas zeroed between calls.
	seen        map[string]struct{}
	batchDeltas []Delta[T]
	// taken is the number of batchDeltas in use by the running batch.
	taken int
}

// replaceOrderedLocked queues a Replace in in-order mode: first a
// final-state-unknown deletion for every queued key (unless its last event
// is already a deletion) and every known key that the list lacks, then a
// Replaced event for every listed object.
func (c *core[T]) replaceOrderedLocked(keys []string, deltas []Delta[T]) {
	q := &c.ord
	listed := make(map[string]struct{}, len(keys))
	for _, key := range keys {
		listed[key] = struct{}{}
	}
	last := make(map[string]int)
	var queued []string
	for i := 0; i < q.events.len(); i++ {
		key := q.events.at(i).key
		if _, ok := last[key]; !ok {
			queued = append(queued, key)
		}
		last[key] = i
	}
	for _, key := range queued {
		if _, ok := listed[key]; ok {
			continue
		}
		if d := q.events.at(last[key]).d; d.Type != Deleted {
			q.events.push(event[T]{key, Delta[T]{Object: d.Object, Type: Deleted, FinalStateUnknown: true}})
		}
	}
	if known := c.cfg.known; known != nil {
		for _, key := range known.ListKeys() {
			_, isListed := listed[key]
			_, isQueued := last[key]
			if isListed || isQueued {
				continue
			}
			obj := c.lookupForDeletion(key)
			q.events.push(event[T]{key, Delta[T]{Object: obj, Type: Deleted, FinalStateUnknown: true}})
		}
	}
	q.events.reserve(len(keys))
	for i, key := range keys {
		q.events.push(event[T]{key, deltas[i]})
	}
	if !c.populated {
		c.populated = true
		c.initialCount = q.events.len()
		c.checkSyncedLocked()
	}
}

// resyncOrderedLocked queues a Sync event for every known object that has
// no queued event.
func (c *core[T]) resyncOrderedLocked() {
	q := &c.ord
	queued := make(map[string]struct{}, q.events.len())
	for i := 0; i < q.events.len(); i++ {
		queued[q.events.at(i).key] = struct{}{}
	}
	for _, key := range c.cfg.known.ListKeys() {
		if _, ok := queued[key]; ok {
			continue
		}
		if obj, ok := c.lookupForSync(key); ok {
			q.events.push(event[T]{key, Delta[T]{Object: obj, Type: Sync}})
		}
	}
}
