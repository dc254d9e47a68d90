package deltafifo

// ring is a growable FIFO ring buffer. Unlike re-slicing a Go slice from the
// front, it reuses its array, so a steady stream of push/pop does not
// allocate. It shrinks when it is mostly empty so that one large Replace does
// not pin memory forever.
type ring[E any] struct {
	// buf holds the elements; its length is zero or a power of two.
	buf []E
	// head is the index in buf of the oldest element.
	head int
	// n is the number of elements; the elements are buf[(head+i)&(len(buf)-1)]
	// for i in [0, n). Every other slot holds the zero E.
	n int
}

const minRing = 16

func (r *ring[E]) len() int { return r.n }

// push appends e at the tail.
func (r *ring[E]) push(e E) {
	if r.n == len(r.buf) {
		r.resize(max(minRing, 2*len(r.buf)))
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = e
	r.n++
}

// at returns the i-th oldest element; i must be in [0, len).
func (r *ring[E]) at(i int) *E {
	return &r.buf[(r.head+i)&(len(r.buf)-1)]
}

// pop removes and returns the oldest element; the ring must not be empty.
func (r *ring[E]) pop() E {
	var zero E
	e := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	if len(r.buf) > 4*minRing && r.n <= len(r.buf)/8 {
		r.resize(len(r.buf) / 2)
	}
	return e
}

// resize moves the elements into a new array of the given power-of-two size.
func (r *ring[E]) resize(size int) {
	buf := make([]E, size)
	for i := 0; i < r.n; i++ {
		buf[i] = *r.at(i)
	}
	r.buf, r.head = buf, 0
}

// reserve grows the ring so that n more elements fit without resizing.
func (r *ring[E]) reserve(n int) {
	need := r.n + n
	if need <= len(r.buf) {
		return
	}
	size := max(minRing, len(r.buf))
	for size < need {
		size *= 2
	}
	r.resize(size)
}
