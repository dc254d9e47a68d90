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
	// Previous is the assignment of the previous Change, nil for the
	// first. With fencing it may be Assignment itself: a Change that only
	// hands out withheld slices.
	Previous *Assignment
	// Gained and Lost are Member's slices that Assignment adds and
	// removes relative to Previous. With fencing (MemberOptions.Fenced)
	// they are relative to what the previous Change handed out: Gained are
	// the slices handed out from now on (some may have been in Withheld
	// before), Lost those no longer handed out.
	Diff
	// Withheld are slices Member owns in Assignment but must not hand out
	// yet: with fencing, another member may still hand them out (it has
	// not announced an assignment without them and its Lease has not
	// expired). Always empty without fencing. A later Change, with the
	// same Assignment, hands them out (in Gained) once released.
	Withheld []int

	// ring is the publishing Member's handover, through which the Sources
	// fed with Changes announce what they have listed and learn what the
	// other members have; nil for a Change not made by a Member.
	ring *handover
	// final marks the last Change of a member leaving its ring: its
	// Sources drop what it lost at once, since it will not be around
	// for the handover.
	final bool
}

// Handed returns the slices c.Member hands out under c, increasing: those
// it owns in c.Assignment, but for c.Withheld.
func (c Change) Handed() []int {
	owned := c.Assignment.Owned(c.Member)
	if len(c.Withheld) == 0 {
		return owned
	}
	return slices.DeleteFunc(owned, func(s int) bool { _, w := slices.BinarySearch(c.Withheld, s); return w })
}

// Matcher owns what c.Member hands out under c (c.Handed()), on field
// (FieldUID when empty): Assignment.Matcher less c.Withheld.
func (c Change) Matcher(field Field) (*Matcher, error) { return c.slicesMatcher(c.Handed(), field) }

// Selector renders what c.Member hands out under c as a shard selector
// (Assignment.Selector less c.Withheld); ok is false when that is nothing.
func (c Change) Selector(field Field) (selector string, ok bool, err error) {
	if err := field.check(); err != nil {
		return "", false, err
	}
	rs := rangesOf(c.Handed(), c.Assignment.n)
	if len(rs) == 0 {
		return "", false, nil
	}
	return RenderSelector(field, rs), true, nil
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

	// settle is how long the live members must stay the same before the
	// first assignment, unless a peer has published already
	// (MemberOptions.JoinWindow); 0 publishes at once.
	settle time.Duration
	// forming is the live set seen while settling, since when.
	forming []string
	since   time.Time

	// fenced holds gained slices back until released (MemberOptions.Fenced).
	fenced bool
	// margin is how long after a peer's Lease expiry it may still hand out
	// its slices (clock skew); fenced only.
	margin time.Duration
	// handed are the slices the last Change handed out, increasing; fenced
	// only.
	handed []int
	// withheld are the last Change's Withheld; fenced only.
	withheld []int
	// published is the Assignment of the last Change, nil before the first.
	published *Assignment
	// known are recent assignments by Fingerprint (at most knownLimit, the
	// oldest dropped first, in order), to read the peers' announcements.
	known      map[string]*Assignment
	knownOrder []string
}

// knownLimit is how many recent assignments a fenced view remembers to
// interpret its peers' announcements; a peer announcing an older one is
// waited for until it announces a newer one or its Lease expires.
const knownLimit = 16

// observe computes the live members at now from peers and returns the
// Change to publish (ok false when the member set is unchanged and, when
// fenced, so are the slices handed out and withheld) and when to look
// again if nothing else happens (zero: no expiry pending; fenced, the
// earliest instant a blocking peer's Lease runs out, margin included).
func (v *view) observe(peers []Peer, now time.Time) (c Change, ok bool, next time.Time) {
	live, next := LiveMembers(peers, now)
	if v.cur == nil {
		if wait := v.settling(peers, live, now); !wait.IsZero() {
			if next.IsZero() || wait.Before(next) {
				next = wait
			}
			return Change{}, false, next
		}
	}
	changed := v.cur == nil || !slices.Equal(v.cur.members, live)
	if !v.fenced {
		if !changed {
			return Change{}, false, next
		}
		a := v.next(live)
		d, err := DiffFor(v.cur, a, v.self)
		if err != nil {
			panic(err) // unreachable: one slice count throughout
		}
		c = Change{Member: v.self, Assignment: a, Previous: v.cur, Diff: d}
		v.cur, v.published = a, a
		return c, true, next
	}
	if changed {
		v.cur = v.next(live)
		v.remember(v.cur)
	}
	handed, withheld, wake := v.fence(peers, now)
	if !wake.IsZero() && (next.IsZero() || wake.Before(next)) {
		next = wake
	}
	if !changed && slices.Equal(handed, v.handed) && slices.Equal(withheld, v.withheld) {
		return Change{}, false, next
	}
	c = Change{Member: v.self, Assignment: v.cur, Previous: v.published,
		Diff: Diff{Gained: minus(handed, v.handed), Lost: minus(v.handed, handed)}, Withheld: withheld}
	v.handed, v.withheld, v.published = handed, withheld, v.cur
	return c, true, next
}

// settling holds the first assignment back while the ring forms, so that
// replicas started together do not each claim everything for a moment: it
// returns when to look again, or zero once the live members (live, at now)
// have stayed the same for settle. A member that sees a live peer
// announcing an assignment joins an established ring, which takes it in at
// once: it does not wait.
func (v *view) settling(peers []Peer, live []string, now time.Time) time.Time {
	if v.settle <= 0 {
		return time.Time{}
	}
	for _, p := range peers {
		if p.Identity != v.self && p.Assignment != "" && p.Live(now) {
			return time.Time{}
		}
	}
	if v.since.IsZero() || !slices.Equal(live, v.forming) {
		v.forming, v.since = live, now
	}
	if until := v.since.Add(v.settle); now.Before(until) {
		return until
	}
	return time.Time{}
}

// leaving is the last Change of a member that leaves the ring: cur without
// it, everything it handed out lost. ok is false when it has nothing to
// publish (no assignment yet, or already out of the ring).
func (v *view) leaving() (c Change, ok bool) {
	prev := v.cur
	if prev == nil || !prev.Has(v.self) {
		return Change{}, false
	}
	next := prev.Without(v.self)
	lost := prev.Owned(v.self)
	if v.fenced {
		lost = v.handed
		v.remember(next)
		v.handed, v.withheld = nil, nil
	}
	v.cur, v.published = next, next
	return Change{Member: v.self, Assignment: next, Previous: prev, Diff: Diff{Lost: lost}, final: true}, true
}

// fence splits the slices self owns in cur into those it may hand out and
// those still withheld: a slice already handed out stays so; one gained is
// handed out once every other peer whose Lease is in force (or expired
// less than margin ago) announces a known assignment in which it does not
// own the slice. wake is the earliest instant at which a blocking peer's
// Lease runs out (zero: none).
func (v *view) fence(peers []Peer, now time.Time) (handed, withheld []int, wake time.Time) {
	for _, s := range v.cur.Owned(v.self) {
		if _, ok := slices.BinarySearch(v.handed, s); ok {
			handed = append(handed, s)
			continue
		}
		free := true
		for _, p := range peers {
			if p.Identity == v.self {
				continue
			}
			until := p.Expiry().Add(v.margin)
			if !until.After(now) {
				continue // its Lease ran out, margin included: it stopped
			}
			if a, ok := v.known[p.Assignment]; ok && a.Owner(s) != p.Identity {
				continue // it announces an assignment without s: released
			}
			free = false
			if wake.IsZero() || until.Before(wake) {
				wake = until
			}
		}
		if free {
			handed = append(handed, s)
		} else {
			withheld = append(withheld, s)
		}
	}
	return handed, withheld, wake
}

// remember records a under its fingerprint for reading announcements.
func (v *view) remember(a *Assignment) {
	fp := a.Fingerprint()
	if v.known == nil {
		v.known = map[string]*Assignment{}
	}
	if _, ok := v.known[fp]; ok {
		return
	}
	v.known[fp] = a
	v.knownOrder = append(v.knownOrder, fp)
	if len(v.knownOrder) > knownLimit {
		delete(v.known, v.knownOrder[0])
		v.knownOrder = v.knownOrder[1:]
	}
}

// minus returns the elements of a (increasing) not in b (increasing).
func minus(a, b []int) []int {
	var out []int
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			out = append(out, x)
		}
	}
	return out
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
