package reflector

import "sort"

// streamBuffer holds a streaming list's initial objects until the store
// takes them. With a page size (a PagedStore), it hands them over a page
// at a time as they arrive, so the new list never sits whole beside the
// cache; without one it keeps them all until the initial-events-end
// bookmark, as one Replace.
//
// Invariants: keys[i] is the key of items[i]; at maps each key in keys to
// its index; no key appears twice. pages counts the pages handed over.
type streamBuffer[T any] struct {
	pageSize int
	items    []T
	keys     []string
	at       map[string]int
	pages    int
}

func newStreamBuffer[T any](pageSize int) *streamBuffer[T] {
	return &streamBuffer[T]{pageSize: pageSize, at: make(map[string]int)}
}

// put adds or replaces key's object. When that fills a page, it returns
// the page, which the buffer no longer holds.
func (b *streamBuffer[T]) put(key string, obj T) (page []T) {
	if i, ok := b.at[key]; ok {
		b.items[i] = obj
		return nil
	}
	b.at[key] = len(b.items)
	b.items = append(b.items, obj)
	b.keys = append(b.keys, key)
	if b.pageSize > 0 && len(b.items) >= b.pageSize {
		page = b.items
		b.items, b.keys = nil, nil
		clear(b.at)
		b.pages++
	}
	return page
}

// remove drops key if the buffer holds it and reports whether it did. A
// key handed over in an earlier page is not held any more.
func (b *streamBuffer[T]) remove(key string) bool {
	i, ok := b.at[key]
	if !ok {
		return false
	}
	last := len(b.items) - 1
	b.items[i], b.keys[i] = b.items[last], b.keys[last]
	b.at[b.keys[i]] = i
	var zero T
	b.items[last] = zero
	b.items, b.keys = b.items[:last], b.keys[:last]
	delete(b.at, key)
	return true
}

// rest returns what the buffer still holds: sorted by key when no page
// was handed over (one Replace, in a stable order), else in arrival order.
func (b *streamBuffer[T]) rest() []T {
	if b.pages == 0 {
		sort.Sort(byKey[T]{b})
	}
	items := b.items
	b.items, b.keys = nil, nil
	clear(b.at)
	return items
}

// byKey sorts a buffer's items and keys together by key.
type byKey[T any] struct{ b *streamBuffer[T] }

func (s byKey[T]) Len() int           { return len(s.b.keys) }
func (s byKey[T]) Less(i, j int) bool { return s.b.keys[i] < s.b.keys[j] }
func (s byKey[T]) Swap(i, j int) {
	s.b.keys[i], s.b.keys[j] = s.b.keys[j], s.b.keys[i]
	s.b.items[i], s.b.items[j] = s.b.items[j], s.b.items[i]
}
