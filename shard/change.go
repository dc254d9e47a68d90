package shard

import (
	"fmt"
	"slices"
)

// With returns the assignment of a's ring with member added (a itself if it
// is already there). It costs one Weight per slice rather than one per
// slice and member, and gives exactly what Assign would.
func (a *Assignment) With(member string) (*Assignment, error) {
	if member == "" {
		return nil, fmt.Errorf("shard: empty member name")
	}
	at, found := slices.BinarySearch(a.members, member)
	if found {
		return a, nil
	}
	b := &Assignment{n: a.n, members: slices.Insert(slices.Clone(a.members), at, member),
		owner: make([]int32, a.n), best: slices.Clone(a.best)}
	seed := memberSeed(member)
	for s, o := range a.owner {
		if int(o) >= at {
			o++ // indexes at and above shift up by the insertion
		}
		if w := weight(seed, sliceSeed(s)); o < 0 || beats(w, member, a.best[s], b.members[o]) {
			o, b.best[s] = int32(at), w
		}
		b.owner[s] = o
	}
	return b, nil
}

// Without returns the assignment of a's ring with member removed (a itself
// if it is not there). Only member's slices are placed again.
func (a *Assignment) Without(member string) *Assignment {
	at, found := slices.BinarySearch(a.members, member)
	if !found {
		return a
	}
	b := &Assignment{n: a.n, members: slices.Delete(slices.Clone(a.members), at, at+1),
		owner: make([]int32, a.n), best: slices.Clone(a.best)}
	seeds := make([]uint64, len(b.members))
	for i, m := range b.members {
		seeds[i] = memberSeed(m)
	}
	for s, o := range a.owner {
		switch {
		case int(o) > at:
			b.owner[s] = o - 1
		case int(o) < at:
			b.owner[s] = o
		default: // member's slice: the best remaining bid takes it
			ss := sliceSeed(s)
			bi, bw := int32(-1), uint64(0)
			for i, ms := range seeds {
				if w := weight(ms, ss); bi < 0 || w > bw {
					bi, bw = int32(i), w
				}
			}
			b.owner[s], b.best[s] = bi, bw
		}
	}
	return b
}

// Diff is what changed for one member between two assignments of the same
// number of slices.
type Diff struct {
	// Gained are the slices member owns in the new assignment and did not
	// in the old one, increasing.
	Gained []int
	// Lost are the slices member owned in the old assignment and does not
	// in the new one, increasing.
	Lost []int
}

// Empty reports whether nothing changed.
func (d Diff) Empty() bool { return len(d.Gained) == 0 && len(d.Lost) == 0 }

// DiffFor compares member's slices in old and new. A nil old (no assignment
// yet) counts as one in which member owns nothing. It is an error for old
// and new to have different numbers of slices.
func DiffFor(old, new *Assignment, member string) (Diff, error) {
	var d Diff
	if old == nil {
		d.Gained = new.Owned(member)
		return d, nil
	}
	if old.n != new.n {
		return d, fmt.Errorf("shard: cannot compare %d slices with %d", old.n, new.n)
	}
	for s := range new.n {
		was, is := old.Owner(s) == member, new.Owner(s) == member
		switch {
		case is && !was:
			d.Gained = append(d.Gained, s)
		case was && !is:
			d.Lost = append(d.Lost, s)
		}
	}
	return d, nil
}

// Moved returns the slices whose owner differs between old and new, which
// must have the same number of slices.
func Moved(old, new *Assignment) ([]int, error) {
	if old.n != new.n {
		return nil, fmt.Errorf("shard: cannot compare %d slices with %d", old.n, new.n)
	}
	var out []int
	for s := range new.n {
		if old.Owner(s) != new.Owner(s) {
			out = append(out, s)
		}
	}
	return out, nil
}
