package informer

// ring is a FIFO queue backed by a circular slice. It grows by doubling and
// shrinks by half once a quarter full (down to ringKeep slots), so a burst's
// memory is given back —
// unlike a buffer that only ever grows.
//
// Invariants: len(buf) is 0 or a power of two; the n elements in use are
// buf[head], buf[head+1], … modulo len(buf); unused slots hold zero values so
// they pin no memory.
type ring[E any] struct {
	buf  []E
	head int
	n    int
}

// ringMin is the first allocation; ringKeep is the size below which a ring
// no longer shrinks, so that a listener whose buffer fills and empties with
// every burst does not reallocate it every time.
const (
	ringMin  = 16
	ringKeep = 256
)

func (r *ring[E]) len() int { return r.n }

func (r *ring[E]) push(e E) {
	if r.n == len(r.buf) {
		r.resize(max(2*len(r.buf), ringMin))
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = e
	r.n++
}

// peek returns the oldest element; the ring must not be empty.
func (r *ring[E]) peek() *E { return &r.buf[r.head] }

// pop removes and returns the oldest element; the ring must not be empty.
func (r *ring[E]) pop() E {
	var zero E
	e := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	if len(r.buf) > ringKeep && r.n <= len(r.buf)/4 {
		r.resize(len(r.buf) / 2)
	}
	return e
}

// clear drops every element and the backing array.
func (r *ring[E]) clear() { *r = ring[E]{} }

func (r *ring[E]) resize(size int) {
	buf := make([]E, size)
	for i := 0; i < r.n; i++ {
		buf[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = buf, 0
}
