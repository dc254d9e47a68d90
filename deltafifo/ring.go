package deltafifo

// ring is a growable FIFO ring buffer. Unlike re-slicing a Go slice from the
// front, it reuses its array, so a steady stream of push/pop does not
// allocate. It shrinks when it is mostly empty so that one large Replace does
// not pin memory forever.
type ring[E any] struct {
	// buf holds the elements.
	buf []E
	// head is the index in buf of the oldest element; 0 when buf is empty.
	head int
	// n is the number of elements; the elements are buf[(head+i)%len(buf)]
	// for i in [0, n). Every other slot holds the zero E.
	n int
}

const minRing = 16

func (r *ring[E]) len() int { return r.n }

// index maps the i-th oldest element to its slot in buf.
func (r *ring[E]) index(i int) int {
	j := r.head + i
	if j >= len(r.buf) {
		j -= len(r.buf)
	}
	return j
}

// push appends e at the tail.
func (r *ring[E]) push(e E) {
	if r.n == len(r.buf) {
		r.resize(max(minRing, 2*len(r.buf)))
	}
	r.buf[r.index(r.n)] = e
	r.n++
}

// at returns the i-th oldest element; i must be in [0, len).
func (r *ring[E]) at(i int) *E {
	return &r.buf[r.index(i)]
}

// pop removes and returns the oldest element; the ring must not be empty.
func (r *ring[E]) pop() E {
	var zero E
	e := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = r.index(1)
	r.n--
	if len(r.buf) > 4*minRing && r.n <= len(r.buf)/8 {
		r.resize(len(r.buf) / 2)
	}
	return e
}

// reserve grows the ring so that n more elements fit without resizing,
// allocating exactly what is needed when it must grow.
func (r *ring[E]) reserve(n int) {
	if need := r.n + n; need > len(r.buf) {
		r.resize(max(minRing, need))
	}
}

// resize moves the elements into a new array of the given size (>= n).
func (r *ring[E]) resize(size int) {
	buf := make([]E, size)
	for i := 0; i < r.n; i++ {
		buf[i] = *r.at(i)
	}
	r.buf, r.head = buf, 0
}
