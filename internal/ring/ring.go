// Package ring is the one FIFO ring buffer of the module: the queue of a
// delta FIFO (coalescing keys, in-order events, ListEnd sentinels), the
// buffers of an informer's listeners and a work queue's ready set.
//
// A [Ring] reuses its array, so a steady stream of pushes and pops does
// not allocate (unlike re-slicing a Go slice from the front), and it gives
// memory back once mostly empty, so that one burst (a large relist) does
// not pin its size forever.
//
// # Usage
//
//	var r ring.Ring[string] // the zero Ring is empty and ready to use
//	r.Reserve(len(keys))    // room for a list at once: one exact allocation
//	for _, k := range keys {
//		r.Push(k)
//	}
//	for r.Len() > 0 {
//		use(r.Pop())
//	}
//
// # Shrinking
//
// By default a Ring halves once at most an eighth of it is in use, down to
// Keep slots (64 if zero). A Patient ring looks at windows of as many pops
// as it has slots: it shrinks only after a whole window in which it was
// never more than an eighth full, and then straight to four times the most
// it held in that window, rounded up to a power of two. A queue that fills
// and drains again and again keeps its buffer instead of reallocating it
// every cycle (its peak stays above an eighth), and a burst's memory is
// still given back once a window of steady traffic has passed. An owner
// that knows a burst is over calls [Ring.Trim]: an empty ring then gives
// its memory back at once, whatever its policy.
//
// # Concurrency
//
// A Ring is not safe for concurrent use: its owner guards it.
//
// # Testing
//
// ring_test.go drives a Ring and a plain slice with the same random
// operations in both policies, and checks the sizes that each policy
// shrinks to.
package ring

// Ring is a growable FIFO ring buffer. The zero Ring is empty, with the
// default policy; set Keep and Patient before the first Push.
type Ring[E any] struct {
	// buf holds the elements.
	buf []E
	// head is the index in buf of the oldest element; 0 when buf is empty.
	head int
	// n is the number of elements; the elements are buf[(head+i)%len(buf)]
	// for i in [0, n). Every other slot holds the zero E, so that popped
	// elements pin no memory.
	n int
	// pops counts pops since the current window began, and peak is the
	// most elements held since then (Patient rings).
	pops, peak int

	// Keep is the size at or below which the ring never shrinks; zero
	// means DefaultKeep.
	Keep int
	// Patient selects the patient shrinking policy (see the package
	// documentation).
	Patient bool
}

const (
	// minSize is the first allocation, and the smallest a patient ring
	// shrinks to.
	minSize = 16
	// DefaultKeep is the size at or below which a Ring with a zero Keep
	// never shrinks.
	DefaultKeep = 4 * minSize
)

// Len returns the number of elements.
func (r *Ring[E]) Len() int { return r.n }

// Cap returns the number of slots: how many elements fit without growing.
func (r *Ring[E]) Cap() int { return len(r.buf) }

// index maps the i-th oldest element to its slot in buf.
func (r *Ring[E]) index(i int) int {
	j := r.head + i
	if j >= len(r.buf) {
		j -= len(r.buf)
	}
	return j
}

// Push appends e at the tail, doubling the ring if it is full.
func (r *Ring[E]) Push(e E) {
	if r.n == len(r.buf) {
		r.resize(max(minSize, 2*len(r.buf)))
	}
	r.buf[r.index(r.n)] = e
	r.n++
	r.peak = max(r.peak, r.n)
}

// At returns the i-th oldest element; i must be in [0, Len()).
func (r *Ring[E]) At(i int) *E {
	return &r.buf[r.index(i)]
}

// Peek returns the oldest element; the ring must not be empty.
func (r *Ring[E]) Peek() *E { return &r.buf[r.head] }

// Pop removes and returns the oldest element; the ring must not be empty.
// It shrinks the ring as its policy says.
func (r *Ring[E]) Pop() E {
	var zero E
	e := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = r.index(1)
	r.n--
	if r.n <= len(r.buf)/8 && len(r.buf) > r.keep() {
		r.shrink()
	} else if r.Patient {
		r.pops++
	}
	return e
}

func (r *Ring[E]) keep() int {
	if r.Keep > 0 {
		return r.Keep
	}
	return DefaultKeep
}

// shrink resizes a ring that is at most an eighth full, as its policy
// says.
func (r *Ring[E]) shrink() {
	if !r.Patient {
		r.resize(len(r.buf) / 2)
		return
	}
	if r.pops++; r.pops <= len(r.buf) {
		return
	}
	if r.peak <= len(r.buf)/8 {
		r.resize(max(minSize, r.keep(), 4*ceilPow2(r.peak)))
		return
	}
	r.pops, r.peak = 0, r.n // a new window
}

// Reserve grows the ring so that n more elements fit without resizing,
// allocating exactly what is needed when it must grow.
func (r *Ring[E]) Reserve(n int) {
	if need := r.n + n; need > len(r.buf) {
		r.resize(max(minSize, need))
	}
}

// Trim gives the memory of an empty ring back at once, whatever its
// policy: for the owner that knows a burst is over (a listener that has
// delivered its initial list), so that a ring that will stay quiet does
// not keep the burst's size. A ring holding elements is left as it is.
func (r *Ring[E]) Trim() {
	if r.n == 0 && len(r.buf) > r.keep() {
		r.Clear()
	}
}

// Clear drops every element and the backing array.
func (r *Ring[E]) Clear() {
	*r = Ring[E]{Keep: r.Keep, Patient: r.Patient}
}

// resize moves the elements into a new array of the given size (>= n).
func (r *Ring[E]) resize(size int) {
	buf := make([]E, size)
	if r.n > 0 {
		// At most two copies: from head to the end of buf, then the
		// wrapped part.
		k := copy(buf, r.buf[r.head:min(len(r.buf), r.head+r.n)])
		copy(buf[k:], r.buf[:r.n-k])
	}
	r.buf, r.head, r.pops, r.peak = buf, 0, 0, r.n
}

// ceilPow2 returns the smallest power of two >= n (1 for n <= 1).
func ceilPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}
