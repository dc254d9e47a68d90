package shard

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/sharding"
)

func TestSelectorTable(t *testing.T) {
	const uid = "object.metadata.uid"
	for _, tc := range []struct {
		name    string
		members []string
		slices  int
		member  string
		field   Field
		want    string
		ok      bool
	}{
		{name: "sole member: the whole space", members: []string{"a"}, slices: 4, member: "a",
			want: "shardRange(" + uid + ", '0x0000000000000000', '0x10000000000000000')", ok: true},
		{name: "namespace field", members: []string{"a"}, slices: 2, member: "a", field: FieldNamespace,
			want: "shardRange(object.metadata.namespace, '0x0000000000000000', '0x10000000000000000')", ok: true},
		{name: "stranger owns nothing", members: []string{"a"}, slices: 4, member: "b", ok: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := MustAssign(tc.members, Options{Slices: tc.slices})
			got, ok, err := a.Selector(tc.member, tc.field)
			if err != nil || got != tc.want || ok != tc.ok {
				t.Errorf("Selector = %q, %v, %v; want %q, %v", got, ok, err, tc.want, tc.ok)
			}
		})
	}
	if _, _, err := MustAssign([]string{"a"}, Options{}).Selector("a", "metadata.name"); err == nil {
		t.Error("unsupported field accepted")
	}
}

// TestSelectorMergesAdjacentSlices: two members over 4 slices, rendered by
// hand from the owners.
func TestSelectorMergesAdjacentSlices(t *testing.T) {
	a := MustAssign([]string{"a", "b"}, Options{Slices: 4})
	for _, m := range []string{"a", "b"} {
		var want []string
		for s := 0; s < 4; {
			if a.Owner(s) != m {
				s++
				continue
			}
			e := s
			for e+1 < 4 && a.Owner(e+1) == m {
				e++
			}
			end := fmt.Sprintf("0x%016x", uint64(e+1)<<62)
			if e == 3 {
				end = "0x10000000000000000"
			}
			want = append(want, fmt.Sprintf("shardRange(object.metadata.uid, '0x%016x', '%s')", uint64(s)<<62, end))
			s = e + 1
		}
		got, _, _ := a.Selector(m, "")
		if got != strings.Join(want, " || ") {
			t.Errorf("%s: %s\nwant %s", m, got, strings.Join(want, " || "))
		}
	}
}

// TestSelectorRoundTrip: the rendered selector parses back to the same
// ranges and, as apimachinery's Selector, to the same string; the server's
// Selector.Matches and the client's Matcher agree on random objects; and
// every hash has exactly one owner among the members' ranges.
func TestSelectorRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for trial := range 40 {
		n := []int{1024, 1000, 3, 1}[trial%4]
		field := []Field{FieldUID, FieldNamespace}[trial%2]
		members := randomMembers(r, 1+r.IntN(12))
		a := MustAssign(members, Options{Slices: n})
		matchers := map[string]*Matcher{}
		servers := map[string]sharding.Selector{}
		for _, m := range members {
			sel, ok, err := a.Selector(m, field)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				continue // owns nothing: the caller lists nothing
			}
			f, rs, err := ParseRanges(sel)
			if err != nil {
				t.Fatalf("ParseRanges(%q): %v", sel, err)
			}
			if f != field || !slices.Equal(rs, a.Ranges(m)) {
				t.Fatalf("round trip: %v %v, want %v %v", f, rs, field, a.Ranges(m))
			}
			ps, err := ParseSelector(sel)
			if err != nil {
				t.Fatal(err)
			}
			if ps.String() != sel {
				t.Fatalf("apimachinery renders %q as %q", sel, ps.String())
			}
			servers[m] = ps
			if matchers[m], err = a.Matcher(m, field); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 300 {
			obj := testObject(fmt.Sprintf("ns-%d", r.IntN(50)), randomUID(r))
			owners := 0
			for _, m := range members {
				mine := matchers[m] != nil && matchers[m].Owns(obj)
				server := false
				if s := servers[m]; s != nil {
					var err error
					if server, err = s.Matches(obj); err != nil {
						t.Fatal(err)
					}
				}
				if mine != server {
					t.Fatalf("trial %d obj %d: %s: Matcher %v, server selector %v", trial, i, m, mine, server)
				}
				if mine {
					owners++
					if a.OwnerOfKey(field.Value(obj)) != m {
						t.Fatalf("Matcher of %s owns an object OwnerOfKey gives to %s", m, a.OwnerOfKey(field.Value(obj)))
					}
				}
			}
			if owners != 1 {
				t.Fatalf("trial %d: object has %d owners", trial, owners)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	const z, top = "'0x0000000000000000'", "'0x10000000000000000'"
	for _, s := range []string{
		"",
		"shardRange(object.metadata.uid, " + z + ")",
		"shardRange(object.metadata.name, " + z + ", " + top + ")",
		"shardRange(object.metadata.uid, '0x0', " + top + ")",                // not 16 digits
		"shardRange(object.metadata.uid, '0x000000000000000A', " + top + ")", // uppercase
		"shardRange(object.metadata.uid, 0x0000000000000000, " + top + ")",   // unquoted
		"shardRange(object.metadata.uid, " + top + ", " + top + ")",          // start not below end
		"shardRange(object.metadata.uid, '0x8000000000000000', " + z + ")",   // reversed
		"shardRange(object.metadata.uid, " + z + ", '0x20000000000000000')",  // beyond 2^64
		"shardRange(object.metadata.uid, " + z + ", " + top + ") || shardRange(object.metadata.namespace, " + z + ", " + top + ")",
		"shardRange(object.metadata.uid, " + z + ", " + top + ") && true",
	} {
		if _, _, err := ParseRanges(s); err == nil {
			t.Errorf("ParseRanges(%q) succeeded", s)
		}
	}
	if _, err := ParseSelector("nonsense"); err == nil {
		t.Error("ParseSelector(nonsense) succeeded")
	}
}

// TestDefaultSlicesFitTheServer: with the default slice count, every
// member's selector fits kube-apiserver's 100,000 characters at every
// ring size (the longest are a ring of two's), on either field.
func TestDefaultSlicesFitTheServer(t *testing.T) {
	for n := 1; n <= 8; n++ {
		var members []string
		for i := range n {
			members = append(members, fmt.Sprintf("pod-%d", i))
		}
		a := MustAssign(members, Options{})
		for _, f := range []Field{FieldUID, FieldNamespace} {
			for _, m := range members {
				if sel, _, _ := a.Selector(m, f); len(sel) > maxSelectorLength {
					t.Errorf("ring of %d, %s on %s: a selector of %d characters", n, m, f, len(sel))
				}
			}
		}
	}
}

// TestFitRanges: ranges too many for the server's limit merge across their
// smallest gaps into a superset that fits, covering every original range;
// few enough stay as they are.
func TestFitRanges(t *testing.T) {
	a := MustAssign([]string{"a", "b"}, Options{Slices: 65536})
	rs := a.Ranges("a")
	fit, exact := fitRanges(FieldNamespace, rs)
	if exact || len(fit) >= len(rs) {
		t.Fatalf("%d ranges fit as they are (%d)", len(rs), len(fit))
	}
	sel := RenderSelector(FieldNamespace, fit)
	if len(sel) > maxSelectorLength {
		t.Fatalf("the fitted selector has %d characters", len(sel))
	}
	if _, got, err := ParseRanges(sel); err != nil || len(got) != len(fit) {
		t.Fatalf("the fitted selector does not parse back: %v", err)
	}
	for i, r := range fit {
		if r.Last < r.Start || i > 0 && r.Start <= fit[i-1].Last {
			t.Fatalf("fitted ranges not increasing and disjoint at %d: %v", i, fit[i-1:i+1])
		}
	}
	j := 0
	for _, r := range rs {
		for j < len(fit) && fit[j].Last < r.Start {
			j++
		}
		if j == len(fit) || fit[j].Start > r.Start || fit[j].Last < r.Last {
			t.Fatalf("range %v is not covered", r)
		}
	}
	small := MustAssign([]string{"a", "b"}, Options{Slices: 64}).Ranges("a")
	if got, exact := fitRanges(FieldUID, small); !exact || !slices.Equal(got, small) {
		t.Fatal("a selector that fits was changed")
	}
}
