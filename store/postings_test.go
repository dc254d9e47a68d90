package store

import (
	"slices"
	"testing"
)

// TestPostingsGrowAndShrink walks a postings list across the slice/map
// boundary in both directions.
func TestPostingsGrowAndShrink(t *testing.T) {
	var p postings[int]
	entries := make([]*entry[int], 3*smallPostings)
	for i := range entries {
		entries[i] = &entry[int]{obj: i, id: uint32(i)}
	}
	for i, e := range entries {
		p.add(e)
		if p.len() != i+1 {
			t.Fatalf("after %d adds len %d", i+1, p.len())
		}
		if wantLarge := i+1 > smallPostings; p.isLarge() != wantLarge {
			t.Fatalf("after %d adds large=%t", i+1, p.isLarge())
		}
	}
	for i, e := range entries {
		empty := p.remove(e)
		p.remove(e) // removing a non-member is a no-op
		left := len(entries) - i - 1
		if empty != (left == 0) || p.len() != left {
			t.Fatalf("after %d removes: len %d empty %t", i+1, p.len(), empty)
		}
		if err := checkPostings(&p); left > 0 && err != nil {
			t.Fatal(err)
		}
		got := slices.Collect(p.all())
		for _, g := range got {
			if !slices.Contains(entries[i+1:], g) {
				t.Fatalf("removed entry %d still present", g.obj)
			}
		}
	}
}
