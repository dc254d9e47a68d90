package store

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestTableAgainstMap drives the table and a Go map through random inserts,
// removes and sweeps over enough keys to grow and shrink it several times.
func TestTableAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tab, ref := newTable[int](), map[string]*entry[int]{}
	for step := range 20000 {
		key := strconv.Itoa(rng.IntN(3000))
		switch n := rng.IntN(100); {
		case n < 55:
			if ref[key] == nil {
				e := &entry[int]{key: key, obj: step}
				tab.insert(e)
				ref[key] = e
			}
		case n < 99:
			if got := tab.remove(key); got != ref[key] {
				t.Fatalf("step %d: remove(%q) = %v, want %v", step, key, got, ref[key])
			}
			delete(ref, key)
		default:
			// Sweep out a random residue class of the stored values.
			mod := 1 + rng.IntN(4)
			offered := map[*entry[int]]bool{}
			tab.sweep(func(e *entry[int]) bool {
				offered[e] = true
				return e.obj%mod == 0
			})
			for k, e := range ref {
				if !offered[e] {
					t.Fatalf("step %d: sweep never offered %q", step, k)
				}
				if e.obj%mod == 0 {
					delete(ref, k)
				}
			}
		}
		if step%97 == 0 || len(ref) < 20 {
			if err := checkTable(&tab); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			for k, e := range ref {
				if tab.get(k) != e || tab.getBytes([]byte(k)) != e {
					t.Fatalf("step %d: get(%q) lost the entry", step, k)
				}
			}
			if tab.count != len(ref) || tab.get("absent") != nil {
				t.Fatalf("step %d: count %d, want %d", step, tab.count, len(ref))
			}
		}
	}
}

// TestEntrySetAgainstMap does the same for the postings hash set, with
// colliding ids mixed in.
func TestEntrySetAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pool := make([]*entry[int], 2000)
	for i := range pool {
		pool[i] = &entry[int]{key: strconv.Itoa(i), id: uint32(i % 1500)}
	}
	var set entrySet[int]
	ref := map[*entry[int]]bool{}
	for step := range 20000 {
		e := pool[rng.IntN(len(pool))]
		if rng.IntN(100) < 52 {
			if !ref[e] {
				set.add(e)
			}
			ref[e] = true
		} else {
			set.remove(e)
			delete(ref, e)
		}
		if step%89 == 0 || len(ref) < 20 {
			if err := checkEntrySet(&set); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			for m := range ref {
				if set.find(m) < 0 {
					t.Fatalf("step %d: lost %q", step, m.key)
				}
			}
			if set.count != len(ref) {
				t.Fatalf("step %d: count %d, want %d", step, set.count, len(ref))
			}
		}
	}
}

// TestTableKeepsSlotsThroughRemovals: a table emptied by removals keeps its
// size (filled again, it grows no more), and a sweep that leaves it less
// than 1/8 full shrinks it to half full in one step.
func TestTableKeepsSlotsThroughRemovals(t *testing.T) {
	tab := newTable[int]()
	for i := range 10000 {
		tab.insert(&entry[int]{key: strconv.Itoa(i), obj: i})
	}
	full := len(tab.slots)
	for i := range 10000 {
		tab.remove(strconv.Itoa(i))
	}
	if len(tab.slots) != full || tab.count != 0 {
		t.Fatalf("after removing every key: %d slots, %d entries; want %d slots, none", len(tab.slots), tab.count, full)
	}
	for i := range 10000 {
		tab.insert(&entry[int]{key: strconv.Itoa(i), obj: i})
	}
	if len(tab.slots) != full {
		t.Fatalf("filled again: %d slots, want %d", len(tab.slots), full)
	}
	tab.sweep(func(e *entry[int]) bool { return e.obj >= 100 })
	if want := 200; len(tab.slots) != want || tab.count != 100 {
		t.Fatalf("after a sweep down to 100 entries: %d slots, %d entries; want %d slots", len(tab.slots), tab.count, want)
	}
	if err := checkTable(&tab); err != nil {
		t.Fatal(err)
	}
}
