package deltafifo

import (
	"math/rand/v2"
	"testing"
)

// TestRingMatchesSlice drives the ring and a plain slice with the same
// random pushes, pops and reserves, through growth and shrinking.
func TestRingMatchesSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var r ring[int]
	var ref []int
	next := 0
	for step := range 200_000 {
		switch op := rng.IntN(100); {
		case op < 3:
			n := rng.IntN(5000)
			r.reserve(n)
			if len(r.buf) < r.n+n {
				t.Fatalf("step %d: reserve(%d) left room for %d", step, n, len(r.buf)-r.n)
			}
		case op < 50 || (step/20_000)%2 == 0 && op < 70:
			r.push(next)
			ref = append(ref, next)
			next++
		case len(ref) > 0:
			if got := r.pop(); got != ref[0] {
				t.Fatalf("step %d: pop = %d, want %d", step, got, ref[0])
			}
			ref = ref[1:]
		}
		if r.len() != len(ref) {
			t.Fatalf("step %d: len = %d, want %d", step, r.len(), len(ref))
		}
		if len(ref) > 0 && *r.at(len(ref) - 1) != ref[len(ref)-1] {
			t.Fatalf("step %d: tail differs", step)
		}
	}
	for len(ref) > 0 {
		if got := r.pop(); got != ref[0] {
			t.Fatalf("drain: pop = %d, want %d", got, ref[0])
		}
		ref = ref[1:]
	}
	if len(r.buf) > 4*minRing {
		t.Fatalf("empty ring still holds %d slots", len(r.buf))
	}
}
