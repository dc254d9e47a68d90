package factoryopts

import (
	"slices"
	"testing"
)

// upstream stands in for client-go's unexported factory struct, and
// upstreamOption for its option type.
type upstream struct{ applied []string }

type upstreamOption func(*upstream) *upstream

func upstreamWith(name string) upstreamOption {
	return func(u *upstream) *upstream {
		u.applied = append(u.applied, name)
		return u
	}
}

type settings struct{ recorded []string }

func recorded(name string) upstreamOption {
	return Option(upstreamWith(name), func(s *settings) { s.recorded = append(s.recorded, name) })
}

func TestApplyRecordsAndAppliesInOrder(t *testing.T) {
	u := &upstream{}
	var s settings
	got, known := Apply(u, []upstreamOption{recorded("a"), nil, recorded("b")}, &s)
	if !known || got != u {
		t.Fatalf("Apply = %p, %v; want %p, true", got, known, u)
	}
	if !slices.Equal(s.recorded, []string{"a", "b"}) || !slices.Equal(u.applied, []string{"a", "b"}) {
		t.Fatalf("recorded %v, applied %v; want both [a b]", s.recorded, u.applied)
	}
}

func TestApplyReportsForeignOptions(t *testing.T) {
	u := &upstream{}
	var s settings
	_, known := Apply(u, []upstreamOption{recorded("a"), upstreamWith("foreign"), recorded("b")}, &s)
	if known {
		t.Fatal("Apply reported every option known; the second is foreign")
	}
	if !slices.Equal(u.applied, []string{"a", "foreign", "b"}) {
		t.Fatalf("applied %v; want every option, in order", u.applied)
	}
}

// A recorded option given to the upstream factory directly (not through
// Apply) is its base option, and records nothing anywhere.
func TestOptionOutsideApplyIsItsBase(t *testing.T) {
	u := recorded("a")(&upstream{})
	if !slices.Equal(u.applied, []string{"a"}) {
		t.Fatalf("applied %v; want [a]", u.applied)
	}
	recording.Range(func(k, _ any) bool {
		t.Errorf("recording still holds %v", k)
		return true
	})
}

// An option without a base only records.
func TestOptionWithoutBase(t *testing.T) {
	u := &upstream{}
	var s settings
	only := Option(upstreamOption(nil), func(s *settings) { s.recorded = append(s.recorded, "only") })
	if _, known := Apply(u, []upstreamOption{only}, &s); !known {
		t.Fatal("an option without a base was not recognised")
	}
	if len(u.applied) != 0 || !slices.Equal(s.recorded, []string{"only"}) {
		t.Fatalf("applied %v, recorded %v; want [], [only]", u.applied, s.recorded)
	}
}

// Options recording into another settings type are foreign to this Apply.
func TestOptionOfAnotherSettingsType(t *testing.T) {
	type other struct{ n int }
	u := &upstream{}
	var s settings
	o := Option(upstreamWith("x"), func(o *other) { o.n++ })
	if _, known := Apply(u, []upstreamOption{o}, &s); known {
		t.Fatal("an option of another settings type was recognised")
	}
}
