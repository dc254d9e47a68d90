package store

import (
	"fmt"
	"testing"
)

// TestRandomOperations drives the typed store, the drop-in indexer,
// client-go's indexer and the naive reference through the same seeded
// random operations and compares every read after every step, once as
// built and once with every index value served from snapshots.
func TestRandomOperations(t *testing.T) {
	for _, min := range []int{snapshotMin, 1} {
		t.Run(fmt.Sprintf("snapshotMin=%d", min), func(t *testing.T) {
			defer func(old int) { snapshotMin = old }(snapshotMin)
			snapshotMin = min
			randomOperations(t)
		})
	}
}

func randomOperations(t *testing.T) {
	seeds, steps := 24, 200
	if testing.Short() {
		seeds = 6
	}
	for seed := range uint64(seeds) {
		f := newFixture(t, seed+1)
		for step := range steps {
			var what string
			switch n := f.rng.IntN(100); {
			case n < 40:
				what = f.upsert()
			case n < 55:
				what = f.delete()
			case n < 63:
				what = f.replace()
			case n < 69:
				what = f.addIndexers()
			case n < 76:
				what = f.session()
			case n < 80:
				what = f.bookmark()
			default:
				what = f.transaction()
			}
			if t.Failed() {
				t.Fatalf("seed %d step %d (%s) failed", seed+1, step, what)
			}
			f.check(what)
		}
	}
}
