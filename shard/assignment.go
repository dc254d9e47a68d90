package shard

import (
	"fmt"
	"slices"
	"strings"
)

// Assignment maps every slice of the hash space to one member of a ring. It
// is a pure function of the member set and the number of slices: every
// replica that sees the same members computes the same Assignment. An
// Assignment is immutable and safe for concurrent use.
type Assignment struct {
	// n is the number of slices, 1 to MaxSlices.
	n int
	// members are the ring's members, sorted, without duplicates or empty
	// names.
	members []string
	// owner[s] is the index in members of slice s's owner, for every s in
	// [0, n); all -1 when members is empty. len(owner) == n.
	owner []int32
	// best[s] is the owner's Weight for slice s (0 when there is none), so
	// that With can place a newcomer without recomputing the incumbents.
	best []uint64
}

// Options configures Assign.
type Options struct {
	// Slices is the number of equal slices the 2^64 hash space is cut into;
	// 0 means DefaultSlices. All replicas of a ring must use the same value.
	Slices int
}

// Assign places every slice on the member with the highest Weight for it.
// Members may come in any order and repeat; an empty name is an error. With
// no members every slice is unowned.
func Assign(members []string, opts Options) (*Assignment, error) {
	n, err := checkSlices(opts.Slices)
	if err != nil {
		return nil, err
	}
	ms, err := normalize(members)
	if err != nil {
		return nil, err
	}
	a := &Assignment{n: n, members: ms, owner: make([]int32, n), best: make([]uint64, n)}
	seeds := make([]uint64, len(ms))
	for i, m := range ms {
		seeds[i] = memberSeed(m)
	}
	for s := range n {
		ss := sliceSeed(s)
		bi, bw := int32(-1), uint64(0)
		for i, ms := range seeds {
			// Members are sorted, so on a tie the earlier (smaller) name,
			// already held, stays.
			if w := weight(ms, ss); bi < 0 || w > bw {
				bi, bw = int32(i), w
			}
		}
		a.owner[s], a.best[s] = bi, bw
	}
	return a, nil
}

// MustAssign is Assign for member sets and options known to be valid, such
// as constants in tests and examples; it panics on an error.
func MustAssign(members []string, opts Options) *Assignment {
	a, err := Assign(members, opts)
	if err != nil {
		panic(err)
	}
	return a
}

// normalize sorts members and drops duplicates.
func normalize(members []string) ([]string, error) {
	ms := slices.Clone(members)
	slices.Sort(ms)
	ms = slices.Compact(ms)
	if len(ms) > 0 && ms[0] == "" {
		return nil, fmt.Errorf("shard: empty member name")
	}
	if len(ms) > 1<<31-1 {
		return nil, fmt.Errorf("shard: %d members is too many", len(ms))
	}
	return ms, nil
}

// Slices is the number of slices of the hash space.
func (a *Assignment) Slices() int { return a.n }

// Members returns the ring's members, sorted. The caller may modify the
// returned slice.
func (a *Assignment) Members() []string { return slices.Clone(a.members) }

// Has reports whether member is in the ring.
func (a *Assignment) Has(member string) bool {
	_, ok := slices.BinarySearch(a.members, member)
	return ok
}

// Owner is the member that owns slice s, or "" when the ring is empty. It
// panics if s is not in [0, Slices()).
func (a *Assignment) Owner(s int) string {
	if i := a.owner[s]; i >= 0 {
		return a.members[i]
	}
	return ""
}

// OwnerOfHash is the member that owns hash h (see Hash), or "" when the
// ring is empty.
func (a *Assignment) OwnerOfHash(h uint64) string { return a.Owner(sliceOf(h, a.n)) }

// OwnerOfKey is the member that owns an object whose field value is key
// (its uid, or its namespace, per the Field in use).
func (a *Assignment) OwnerOfKey(key string) string { return a.OwnerOfHash(Hash(key)) }

// Owned returns the slices member owns, in increasing order; none when it
// is not in the ring.
func (a *Assignment) Owned(member string) []int {
	i, ok := slices.BinarySearch(a.members, member)
	if !ok {
		return nil
	}
	var out []int
	for s, o := range a.owner {
		if int(o) == i {
			out = append(out, s)
		}
	}
	return out
}

// Loads returns how many slices each member owns, by member.
func (a *Assignment) Loads() map[string]int {
	out := make(map[string]int, len(a.members))
	for _, m := range a.members {
		out[m] = 0
	}
	for _, o := range a.owner {
		if o >= 0 {
			out[a.members[o]]++
		}
	}
	return out
}

// Ranges returns member's part of the hash space as the fewest disjoint
// ranges, in increasing order: adjacent owned slices form one range.
func (a *Assignment) Ranges(member string) []Range { return rangesOf(a.Owned(member), a.n) }

// Equal reports whether a and b have the same slices and members (and so
// the same owners).
func (a *Assignment) Equal(b *Assignment) bool {
	return a.n == b.n && slices.Equal(a.members, b.members)
}

// Fingerprint names a's table in a few characters: the slice count and a
// 64-bit FNV-1a hash of the members. Equal assignments have equal
// fingerprints; a member announces its own on its Lease, so that the ring
// can tell when all members agree (Status.Agreed).
func (a *Assignment) Fingerprint() string {
	h := uint64(fnvOffset64)
	for _, m := range a.members {
		for i := 0; i < len(m); i++ {
			h ^= uint64(m[i])
			h *= fnvPrime64
		}
		h *= fnvPrime64 // a separator: ["ab"] and ["a", "b"] differ
	}
	return fmt.Sprintf("%d-%016x", a.n, h)
}

// String summarises a: slices, members and each member's load.
func (a *Assignment) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d slices over %d members", a.n, len(a.members))
	loads := a.Loads()
	for i, m := range a.members {
		if i == 8 {
			fmt.Fprintf(&b, " ...")
			break
		}
		fmt.Fprintf(&b, " %s:%d", m, loads[m])
	}
	return b.String()
}
