package workqueue

// heapKind selects what an idxHeap orders by.
type heapKind uint8

const (
	// byDue orders the delay heap by (due, seq); positions in entry.delayPos.
	byDue heapKind = iota
	// byKey orders the ready heap by (key, seq); positions in entry.heapPos.
	byKey
)

// idxHeap is a binary min-heap of slab indices. Every entry in a[i] has its
// position field (delayPos or heapPos, per kind) equal to i.
type idxHeap[T comparable] struct {
	kind    heapKind
	a       []int32
	entries *[]entry[T] // the owning queue's slab
}

func (h *idxHeap[T]) len() int { return len(h.a) }

func (h *idxHeap[T]) less(i, j int) bool {
	es := *h.entries
	x, y := &es[h.a[i]], &es[h.a[j]]
	if h.kind == byDue {
		if x.due != y.due {
			return x.due < y.due
		}
		return x.dseq < y.dseq
	}
	if x.key != y.key {
		return x.key < y.key
	}
	return x.seq < y.seq
}

func (h *idxHeap[T]) setPos(i int) {
	e := &(*h.entries)[h.a[i]]
	if h.kind == byDue {
		e.delayPos = int32(i)
	} else {
		e.heapPos = int32(i)
	}
}

func (h *idxHeap[T]) swap(i, j int) {
	h.a[i], h.a[j] = h.a[j], h.a[i]
	h.setPos(i)
	h.setPos(j)
}

func (h *idxHeap[T]) push(idx int32) {
	h.a = append(h.a, idx)
	h.setPos(len(h.a) - 1)
	h.up(len(h.a) - 1)
}

// pop removes and returns the minimum; the heap must not be empty.
func (h *idxHeap[T]) pop() int32 {
	top := h.a[0]
	h.removeAt(0)
	return top
}

// removeAt removes position i and marks the removed entry as outside the heap.
func (h *idxHeap[T]) removeAt(i int) {
	idx := h.a[i]
	last := len(h.a) - 1
	if i != last {
		h.swap(i, last)
	}
	h.a = h.a[:last]
	if i != last {
		h.fix(i)
	}
	e := &(*h.entries)[idx]
	if h.kind == byDue {
		e.delayPos = -1
	} else {
		e.heapPos = -1
	}
	if cap(h.a) > 1024 && len(h.a) < cap(h.a)/8 {
		h.a = append(make([]int32, 0, cap(h.a)/2), h.a...)
	}
}

// fix restores the heap after the key at position i changed.
func (h *idxHeap[T]) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h *idxHeap[T]) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

// down sifts position i towards the leaves and reports whether it moved.
func (h *idxHeap[T]) down(i int) bool {
	start, n := i, len(h.a)
	for {
		left := 2*i + 1
		if left >= n {
			break
		}
		child := left
		if right := left + 1; right < n && h.less(right, left) {
			child = right
		}
		if !h.less(child, i) {
			break
		}
		h.swap(i, child)
		i = child
	}
	return i > start
}

func (h *idxHeap[T]) clear() {
	for _, idx := range h.a {
		e := &(*h.entries)[idx]
		if h.kind == byDue {
			e.delayPos = -1
		} else {
			e.heapPos = -1
		}
	}
	h.a = nil
}
