package workqueue

import (
	"math/rand/v2"
	"testing"
)

// TestItemIndexMatchesMap runs random inserts and deletes against the index
// and a Go map, checking every key after each burst, through growth and
// shrinking.
func TestItemIndexMatchesMap(t *testing.T) {
	x := newItemIndex[int]()
	var entries slab[entry[int]]
	ref := map[int]int32{}
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 40 {
		keySpace := 50 + rng.IntN(5000)
		for range 2000 {
			k := rng.IntN(keySpace)
			tag := x.hash(k)
			pos, idx, found := x.find(tag, k, &entries)
			want, inRef := ref[k]
			if found != inRef || (found && idx != want) {
				t.Fatalf("round %d key %d: find = %d,%v; map = %d,%v", round, k, idx, found, want, inRef)
			}
			if found && rng.IntN(2) == 0 {
				x.deleteAt(pos)
				delete(ref, k)
			} else if !found {
				idx := entries.grow()
				entries.at(idx).item = k
				x.insertAt(pos, tag, idx)
				ref[k] = idx
			}
		}
		if round%10 == 9 { // empty it to exercise shrinking
			for k := range ref {
				pos, _, _ := x.find(x.hash(k), k, &entries)
				x.deleteAt(pos)
				delete(ref, k)
			}
			if len(x.slots) > minIndexSlots && x.deletes > len(x.slots) {
				t.Fatalf("empty index kept %d slots after %d deletes", len(x.slots), x.deletes)
			}
		}
		if x.n != len(ref) {
			t.Fatalf("n = %d, map has %d", x.n, len(ref))
		}
		for k, want := range ref {
			if _, idx, ok := x.find(x.hash(k), k, &entries); !ok || idx != want {
				t.Fatalf("round %d: key %d lost (got %d,%v)", round, k, idx, ok)
			}
		}
	}
}
