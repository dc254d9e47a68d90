package shard

import (
	"slices"
	"time"
)

// Change is one step of a member's view of its ring: the new assignment and
// what it means for the member.
type Change struct {
	// Member is the identity the change is for.
	Member string
	// Assignment is the ring's new assignment; never nil. Member may be
	// absent from it (its own Lease expired or was released), in which
	// case it owns nothing.
	Assignment *Assignment
	// Previous is the assignment before, nil for the first Change.
	Previous *Assignment
	// Gained and Lost are Member's slices that Assignment adds and
	// removes relative to Previous.
	Diff
}

// view is the pure core of a Member: it turns the peers seen at an instant
// into Changes. Not safe for concurrent use; Member owns one.
type view struct {
	// self is the member's identity, non-empty.
	self string
	// slices is the ring's slice count, valid.
	slices int
	// cur is the last assignment published, nil before the first.
	cur *Assignment
}

// observe computes the live members at now from peers and returns the
// Change to publish (ok false when the member set is unchanged) and when to
// look again if nothing else happens (zero: no expiry pending).
func (v *view) observe(peers []Peer, now time.Time) (c Change, ok bool, next time.Time) {
	live, next := LiveMembers(peers, now)
	if v.cur != nil && slices.Equal(v.cur.members, live) {
		return Change{}, false, next
	}
	a := v.next(live)
	d, err := DiffFor(v.cur, a, v.self)
	if err != nil {
		panic(err) // unreachable: one slice count throughout
	}
	c = Change{Member: v.self, Assignment: a, Previous: v.cur, Diff: d}
	v.cur = a
	return c, true, next
}

// conflicts lists the live peers whose slice count differs from ours.
func (v *view) conflicts(peers []Peer, now time.Time) []string {
	var out []string
	for _, p := range peers {
		if p.Live(now) && p.Slices != 0 && p.Slices != v.slices {
			out = append(out, p.Identity)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// incrementalLimit is the most joins and leaves next applies one by one
// (each costing about one weight per slice) before it recomputes the whole
// table (one weight per slice and member).
const incrementalLimit = 8

// next is the assignment of live (sorted, unique, non-empty): from cur by
// joins and leaves when few members changed, else from scratch. Both give
// the same table (TestJoinLeaveMovesOnlyTheMinimum).
func (v *view) next(live []string) *Assignment {
	if v.cur != nil {
		joined, left := setDiff(v.cur.members, live)
		if len(joined)+len(left) <= incrementalLimit {
			a := v.cur
			for _, m := range left {
				a = a.Without(m)
			}
			for _, m := range joined {
				var err error
				if a, err = a.With(m); err != nil {
					panic(err) // unreachable: identities are non-empty
				}
			}
			return a
		}
	}
	a, err := Assign(live, Options{Slices: v.slices})
	if err != nil {
		panic(err) // unreachable: identities are non-empty, slices valid
	}
	return a
}

// setDiff returns the names of b missing from a (joined) and of a missing
// from b (left); both inputs sorted and unique.
func setDiff(a, b []string) (joined, left []string) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i] < b[j]:
			left = append(left, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			joined = append(joined, b[j])
			j++
		default:
			i++
			j++
		}
	}
	return joined, left
}

// agreed reports whether every live peer but the member itself announces
// the fingerprint of the member's current assignment.
func (v *view) agreed(peers []Peer, now time.Time) bool {
	if v.cur == nil {
		return false
	}
	fp := v.cur.Fingerprint()
	for _, p := range peers {
		if p.Identity != v.self && p.Live(now) && p.Assignment != fp {
			return false
		}
	}
	return true
}
