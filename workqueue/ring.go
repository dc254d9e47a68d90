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
	if len(r.buf) > 1024 && r.n < len(r.buf)/8 {
		r.resize(len(r.buf) / 2)
	}
}

func (r *ring) resize(size int) {
	buf := make([]ringSlot, size)
	for i := 0; i < r.n; i++ {
		buf[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = buf, 0
}
