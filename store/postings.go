package store

import "iter"

// smallPostings is the largest number of entries a postings list keeps in its
// slice form. Most index values (an owner UID, a config map name) hold a
// handful of objects, and a short slice is smaller than any hash set.
const smallPostings = 8

// postings is the set of entries that share one index value.
//
// Invariants: exactly one representation is in use. While large.slots is
// nil the set is small, with no duplicates, in no particular order, and
// len(small) <= smallPostings. Once large.slots is non-nil, small is nil and
// large holds every member. A postings list is never empty while it is reachable
// from an index: the index drops it when its last member leaves.
type postings[T any] struct {
	small []*entry[T]
	large entrySet[T]
	// snap is the value's snapshot bookkeeping (snapshot.go).
	snap snapState
}

func (p *postings[T]) isLarge() bool { return p.large.slots != nil }

// len returns the number of members.
func (p *postings[T]) len() int {
	if p.isLarge() {
		return p.large.count
	}
	return len(p.small)
}

// add inserts e, which must not be a member.
func (p *postings[T]) add(e *entry[T]) {
	if p.isLarge() {
		p.large.add(e)
		return
	}
	if len(p.small) < smallPostings {
		p.small = append(p.small, e)
		return
	}
	p.large.resize(2 * minSetSize)
	for _, m := range p.small {
		p.large.add(m)
	}
	p.large.add(e)
	p.small = nil
}

// remove deletes e if present and reports whether the set is now empty.
// A large set that shrinks to half the small limit goes back to a slice, so
// a value that briefly had many members does not keep a map forever.
func (p *postings[T]) remove(e *entry[T]) (empty bool) {
	if p.isLarge() {
		p.large.remove(e)
		if p.large.count <= smallPostings/2 {
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
	small := make([]*entry[T], 0, p.large.count)
	for _, m := range p.large.slots {
		if m != nil {
			small = append(small, m)
		}
	}
	p.small, p.large = small, entrySet[T]{}
}

// all yields every member once, in no particular order.
func (p *postings[T]) all() iter.Seq[*entry[T]] {
	return func(yield func(*entry[T]) bool) {
		if p.isLarge() {
			for _, m := range p.large.slots {
				if m != nil && !yield(m) {
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
