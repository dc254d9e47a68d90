package shard

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// naiveOwner is the rendezvous rule written out plainly: the member with
// the highest Weight, ties to the smaller name, whatever the input order.
func naiveOwner(members []string, s int) string {
	best, bw := "", uint64(0)
	for _, m := range members {
		if w := Weight(m, s); best == "" || w > bw || (w == bw && m < best) {
			best, bw = m, w
		}
	}
	return best
}

func randomMembers(r *rand.Rand, n int) []string {
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		m := fmt.Sprintf("replica-%d", r.IntN(10*n+10))
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

func TestAssignTable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members []string
		slices  int
		wantErr bool
		loads   map[string]int
	}{
		{name: "empty ring", members: nil, slices: 4, loads: map[string]int{}},
		{name: "one member owns all", members: []string{"a"}, slices: 8, loads: map[string]int{"a": 8}},
		{name: "duplicates collapse", members: []string{"a", "a"}, slices: 3, loads: map[string]int{"a": 3}},
		{name: "default slices", members: []string{"a"}, loads: map[string]int{"a": DefaultSlices}},
		{name: "empty name", members: []string{"a", ""}, wantErr: true},
		{name: "negative slices", members: []string{"a"}, slices: -1, wantErr: true},
		{name: "too many slices", members: []string{"a"}, slices: MaxSlices + 1, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Assign(tc.members, Options{Slices: tc.slices})
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Assign succeeded: %v", a)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Loads(); !mapsEqual(got, tc.loads) {
				t.Errorf("Loads = %v, want %v", got, tc.loads)
			}
		})
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestAssignEmptyRingOwnsNothing(t *testing.T) {
	a := MustAssign(nil, Options{Slices: 16})
	if got := a.OwnerOfKey("x"); got != "" {
		t.Errorf("OwnerOfKey on an empty ring = %q", got)
	}
	if _, ok, _ := a.Selector("a", FieldUID); ok {
		t.Error("a member of no ring has a selector")
	}
}

// TestAssignMatchesNaive: for random rings, every slice has exactly one
// owner, the one the plain rendezvous rule names, whatever the input order;
// the members' Owned sets partition the slices.
func TestAssignMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 60 {
		n := []int{1, 3, 64, 1000, 1024}[trial%5]
		members := randomMembers(r, 1+r.IntN(40))
		a := MustAssign(members, Options{Slices: n})
		shuffled := slices.Clone(members)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		b := MustAssign(shuffled, Options{Slices: n})
		seen := make([]int, n)
		for _, m := range members {
			for _, s := range a.Owned(m) {
				seen[s]++
			}
		}
		for s := range n {
			if seen[s] != 1 {
				t.Fatalf("trial %d: slice %d has %d owners", trial, s, seen[s])
			}
			if got, want := a.Owner(s), naiveOwner(shuffled, s); got != want {
				t.Fatalf("trial %d: slice %d: owner %q, naive %q", trial, s, got, want)
			}
			if a.Owner(s) != b.Owner(s) {
				t.Fatalf("trial %d: order of members changed slice %d", trial, s)
			}
		}
	}
}

// TestTiesGoToSmallerName forces equal weights through the tie rule.
func TestTiesGoToSmallerName(t *testing.T) {
	if !beats(5, "a", 5, "b") || beats(5, "b", 5, "a") || !beats(6, "z", 5, "a") {
		t.Error("beats does not order ties by name")
	}
}

// moveSlack bounds how far a member's load strays above the even share
// total/members: five standard deviations of the binomial load.
func moveSlack(total, members int) int {
	return int(math.Ceil(5 * math.Sqrt(float64(total)/float64(members))))
}

// TestJoinLeaveMovesOnlyTheMinimum: a join moves exactly the slices the
// naive recomputation gives the newcomer, all of them to the newcomer; a
// leave moves exactly the leaver's slices; no slice moves between two
// members that stay; With and Without agree with Assign; the number moved is
// about slices/N.
func TestJoinLeaveMovesOnlyTheMinimum(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 100 {
		n := []int{1024, 1000, 256, 4096}[trial%4]
		members := randomMembers(r, 1+r.IntN(30))
		before := MustAssign(members, Options{Slices: n})

		// Join.
		joiner := fmt.Sprintf("joiner-%d", trial)
		after, err := before.With(joiner)
		if err != nil {
			t.Fatal(err)
		}
		full := MustAssign(append(slices.Clone(members), joiner), Options{Slices: n})
		checkMove(t, before, after, full, joiner, true, members, n)

		// Leave.
		leaver := members[r.IntN(len(members))]
		after = before.Without(leaver)
		var rest []string
		for _, m := range members {
			if m != leaver {
				rest = append(rest, m)
			}
		}
		full = MustAssign(rest, Options{Slices: n})
		checkMove(t, before, after, full, leaver, false, rest, n)
	}
}

func checkMove(t *testing.T, before, after, full *Assignment, who string, join bool, naiveMembers []string, n int) {
	t.Helper()
	if join {
		naiveMembers = append(slices.Clone(naiveMembers), who)
	}
	moved, err := Moved(before, after)
	if err != nil {
		t.Fatal(err)
	}
	var naiveMoved []int
	for s := range n {
		if after.Owner(s) != full.Owner(s) {
			t.Fatalf("slice %d: incremental owner %q, Assign %q", s, after.Owner(s), full.Owner(s))
		}
		if no := naiveOwner(naiveMembers, s); no != before.Owner(s) {
			naiveMoved = append(naiveMoved, s)
		}
	}
	if !slices.Equal(moved, naiveMoved) {
		t.Fatalf("moved %v, naive recomputation %v", moved, naiveMoved)
	}
	for _, s := range moved {
		if join && after.Owner(s) != who || !join && before.Owner(s) != who {
			t.Fatalf("slice %d moved %q -> %q, not to/from %q", s, before.Owner(s), after.Owner(s), who)
		}
	}
	size := len(after.Members())
	if !join {
		size = len(before.Members())
	}
	if limit := (n+size-1)/size + moveSlack(n, size); len(moved) > limit {
		t.Fatalf("%d of %d slices moved with %d members, more than %d", len(moved), n, size, limit)
	}
	d, err := DiffFor(before, after, who)
	if err != nil {
		t.Fatal(err)
	}
	if join && (!slices.Equal(d.Gained, moved) || len(d.Lost) > 0) || !join && (!slices.Equal(d.Lost, moved) || len(d.Gained) > 0) {
		t.Fatalf("DiffFor(%q) = %+v, moved %v", who, d, moved)
	}
}

func TestWithWithoutIdempotent(t *testing.T) {
	a := MustAssign([]string{"a", "b"}, Options{Slices: 8})
	if b, _ := a.With("a"); b != a {
		t.Error("With an existing member made a new assignment")
	}
	if a.Without("c") != a {
		t.Error("Without a stranger made a new assignment")
	}
	if _, err := a.With(""); err == nil {
		t.Error("With(\"\") succeeded")
	}
	empty := MustAssign(nil, Options{Slices: 8})
	one, _ := empty.With("x")
	if got := one.Loads()["x"]; got != 8 {
		t.Errorf("first member owns %d of 8", got)
	}
	if got := one.Without("x").Owner(3); got != "" {
		t.Errorf("after the last leaves, slice 3 owned by %q", got)
	}
}

func TestDiffForNilAndMismatch(t *testing.T) {
	a := MustAssign([]string{"a", "b"}, Options{Slices: 16})
	d, err := DiffFor(nil, a, "a")
	if err != nil || !slices.Equal(d.Gained, a.Owned("a")) || len(d.Lost) != 0 {
		t.Errorf("DiffFor(nil) = %+v, %v", d, err)
	}
	if _, err := DiffFor(MustAssign([]string{"a"}, Options{Slices: 8}), a, "a"); err == nil {
		t.Error("DiffFor across slice counts succeeded")
	}
	if _, err := Moved(MustAssign([]string{"a"}, Options{Slices: 8}), a); err == nil {
		t.Error("Moved across slice counts succeeded")
	}
}

// TestBalance: with many slices per member, loads stay near the mean.
func TestBalance(t *testing.T) {
	var members []string
	for i := range 10 {
		members = append(members, fmt.Sprintf("pod-%d", i))
	}
	a := MustAssign(members, Options{})
	for m, l := range a.Loads() {
		if mean := DefaultSlices / 10; l < mean-moveSlack(DefaultSlices, 10) || l > mean+moveSlack(DefaultSlices, 10) {
			t.Errorf("%s owns %d slices, mean %d", m, l, mean)
		}
	}
}

func TestFingerprint(t *testing.T) {
	ab := MustAssign([]string{"a", "b"}, Options{Slices: 8})
	for _, tc := range []struct {
		other *Assignment
		same  bool
	}{
		{MustAssign([]string{"b", "a"}, Options{Slices: 8}), true},
		{MustAssign([]string{"a", "b"}, Options{Slices: 16}), false},
		{MustAssign([]string{"ab"}, Options{Slices: 8}), false},
		{MustAssign([]string{"a", "b", "c"}, Options{Slices: 8}), false},
	} {
		if got := ab.Fingerprint() == tc.other.Fingerprint(); got != tc.same {
			t.Errorf("%v vs %v: same fingerprint %v", ab, tc.other, got)
		}
	}
	if fp := ab.Fingerprint(); !strings.HasPrefix(fp, "8-") || len(fp) != 18 {
		t.Errorf("Fingerprint = %q", fp)
	}
}
