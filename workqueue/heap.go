package workqueue

// idxHeap is the ready heap: a binary min-heap of slab indices ordered by
// the entries' (key, seq). Every entry in a[i] has heapPos == i, so a
// queued entry's priority can be raised in O(log n).
type idxHeap[T comparable] struct {
	a       []int32
	entries *slab[entry[T]] // the owning queue's slab
}

func (h *idxHeap[T]) len() int { return len(h.a) }

func (h *idxHeap[T]) less(i, j int) bool {
	x, y := h.entries.at(h.a[i]), h.entries.at(h.a[j])
	if x.key != y.key {
		return x.key < y.key
	}
	return x.seq < y.seq
}

func (h *idxHeap[T]) swap(i, j int) {
	h.a[i], h.a[j] = h.a[j], h.a[i]
	h.entries.at(h.a[i]).heapPos = int32(i)
	h.entries.at(h.a[j]).heapPos = int32(j)
}

func (h *idxHeap[T]) push(idx int32) {
	h.a = append(h.a, idx)
	h.entries.at(idx).heapPos = int32(len(h.a) - 1)
	h.up(len(h.a) - 1)
}

// pop removes and returns the minimum; the heap must not be empty.
func (h *idxHeap[T]) pop() int32 {
	top := h.a[0]
	last := len(h.a) - 1
	if last > 0 {
		h.swap(0, last)
	}
	h.a = h.a[:last]
	if last > 0 {
		h.down(0)
	}
	h.entries.at(top).heapPos = -1
	if cap(h.a) > 1024 && len(h.a) < cap(h.a)/8 {
		h.a = append(make([]int32, 0, cap(h.a)/2), h.a...)
	}
	return top
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
