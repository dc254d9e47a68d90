package workqueue

// delayNode is one scheduled add. It is live while its entry is stWaiting
// with the same dgen; otherwise it is stale (the due time was moved
// earlier by a newer node, or the entry was dropped) and is skipped.
type delayNode struct {
	due int64  // ns since Typed.epoch
	seq uint64 // orders equal due times first-in first-out
	idx int32  // slab index
	gen uint32 // the entry's dgen when the node was pushed
}

// delayHeap is a binary min-heap of delayNodes by (due, seq). Nodes carry
// their keys, so sifting never touches the slab (cache-friendly with 100k+
// pending delays), and moving a due time earlier pushes a new node instead
// of fixing the old one in place.
type delayHeap struct {
	a []delayNode
	// stale counts nodes in a that are no longer live.
	stale int
}

func (h *delayHeap) live() int { return len(h.a) - h.stale }

func nodeLess(x, y *delayNode) bool {
	if x.due != y.due {
		return x.due < y.due
	}
	return x.seq < y.seq
}

func (h *delayHeap) push(n delayNode) {
	h.a = append(h.a, n)
	i := len(h.a) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !nodeLess(&h.a[i], &h.a[parent]) {
			break
		}
		h.a[i], h.a[parent] = h.a[parent], h.a[i]
		i = parent
	}
}

// pop removes the minimum; the heap must not be empty.
func (h *delayHeap) pop() {
	last := len(h.a) - 1
	h.a[0] = h.a[last]
	h.a = h.a[:last]
	h.down(0)
	if cap(h.a) > 1024 && len(h.a) < cap(h.a)/8 {
		h.a = append(make([]delayNode, 0, cap(h.a)/2), h.a...)
	}
}

func (h *delayHeap) down(i int) {
	n := len(h.a)
	for {
		child := 2*i + 1
		if child >= n {
			return
		}
		if right := child + 1; right < n && nodeLess(&h.a[right], &h.a[child]) {
			child = right
		}
		if !nodeLess(&h.a[child], &h.a[i]) {
			return
		}
		h.a[i], h.a[child] = h.a[child], h.a[i]
		i = child
	}
}

// compact drops stale nodes (keep reports liveness) and re-heapifies in
// O(n). Callers run it when stale nodes outnumber live ones.
func (h *delayHeap) compact(keep func(*delayNode) bool) {
	live := h.a[:0]
	for i := range h.a {
		if keep(&h.a[i]) {
			live = append(live, h.a[i])
		}
	}
	clear(h.a[len(live):])
	h.a, h.stale = live, 0
	for i := len(h.a)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}
