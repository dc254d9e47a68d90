package workqueue

// ringSlot names an entry and the generation it had when it was pushed.
type ringSlot struct {
	idx int32
	gen uint32
}

// ring is a growable circular FIFO of slots. It is the ready set for items
// of priority zero, whose keys arrive in non-decreasing order.
type ring struct {
	// buf has a power-of-two length (or is nil); live slots are
	// buf[(head+i)&(len-1)] for i < n.
	buf  []ringSlot
	head int
	n    int
	// drops counts removals since the last resize; shrinking waits until
	// it exceeds len(buf) so that refilling queues do not thrash.
	drops int
}

func (r *ring) push(s ringSlot) {
	if r.n == len(r.buf) {
		r.resize(max(2*len(r.buf), 64))
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = s
	r.n++
}

// peek returns the oldest slot; r.n must be positive.
func (r *ring) peek() ringSlot { return r.buf[r.head] }

// drop removes the oldest slot and shrinks a mostly empty buffer.
func (r *ring) drop() {
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	r.drops++
	if len(r.buf) > 1024 && r.n < len(r.buf)/8 && r.drops > len(r.buf) {
		r.resize(max(64, 4*ceilPow2(r.n)))
	}
}

func (r *ring) resize(size int) {
	r.drops = 0
	buf := make([]ringSlot, size)
	for i := 0; i < r.n; i++ {
		buf[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = buf, 0
}
