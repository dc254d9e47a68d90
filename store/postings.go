package store

import "iter"

// smallPostings is the largest number of entries a postings list keeps in its
// slice form. Most index values (a node name, an owner UID) hold a handful of
// objects, and a short slice is several times smaller than a map.
const smallPostings = 8

// postings is the set of entries that share one index value.
//
// Invariants: exactly one representation is in use. While large is nil the
// set is small, with no duplicates, in no particular order, and
// len(small) <= smallPostings. Once large is non-nil, small is nil and large
// holds every member. A postings list is never empty while it is reachable
// from an index: the index drops it when its last member leaves.
type postings[T any] struct {
	small []*entry[T]
	large map[*entry[T]]struct{}
}

// len returns the number of members.
func (p *postings[T]) len() int {
	if p.large != nil {
		return len(p.large)
	}
	return len(p.small)
}

// add inserts e; adding a member twice is a no-op.
func (p *postings[T]) add(e *entry[T]) {
	if p.large != nil {
		p.large[e] = struct{}{}
		return
	}
	for _, m := range p.small {
		if m == e {
			return
		}
	}
	if len(p.small) < smallPostings {
		p.small = append(p.small, e)
		return
	}
	p.large = make(map[*entry[T]]struct{}, 2*smallPostings)
	for _, m := range p.small {
		p.large[m] = struct{}{}
	}
	p.large[e] = struct{}{}
	p.small = nil
}

// remove deletes e if present and reports whether the set is now empty.
// A large set that shrinks to half the small limit goes back to a slice, so
// a value that briefly had many members does not keep a map forever.
func (p *postings[T]) remove(e *entry[T]) (empty bool) {
	if p.large != nil {
		delete(p.large, e)
		if len(p.large) <= smallPostings/2 {
			p.shrink()
		}
		return p.len() == 0
	}
	for i, m := range p.small {
		if m == e {
			last := len(p.small) - 1
			p.small[i] = p.small[last]
			p.small[last] = nil
			p.small = p.small[:last]
			break
		}
	}
	return len(p.small) == 0
}

// shrink converts a large set back to the slice form.
func (p *postings[T]) shrink() {
	small := make([]*entry[T], 0, len(p.large))
	for m := range p.large {
		small = append(small, m)
	}
	p.small, p.large = small, nil
}

// all yields every member once, in no particular order.
func (p *postings[T]) all() iter.Seq[*entry[T]] {
	return func(yield func(*entry[T]) bool) {
		if p.large != nil {
			for m := range p.large {
				if !yield(m) {
					return
				}
			}
			return
		}
		for _, m := range p.small {
			if !yield(m) {
				return
			}
		}
	}
}
