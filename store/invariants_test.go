package store

import (
	"fmt"
	"slices"
)

// checkCore verifies the engine's documented invariants from scratch.
func checkCore[T any](c *core[T]) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.session != 0 && c.session != c.gen {
		return fmt.Errorf("open session %d is not the newest generation %d", c.session, c.gen)
	}
	for key, e := range c.items {
		if e.key != key {
			return fmt.Errorf("entry under %q has key %q", key, e.key)
		}
	}
	for _, ix := range c.indexes {
		if err := checkIndex(c, ix); err != nil {
			return fmt.Errorf("index %q: %w", ix.name, err)
		}
	}
	return nil
}

func checkIndex[T any](c *core[T], ix *index[T]) error {
	members := 0
	for v, p := range ix.values {
		if err := checkPostings(p); err != nil {
			return fmt.Errorf("value %q: %w", v, err)
		}
		for e := range p.all() {
			if c.items[e.key] != e {
				return fmt.Errorf("value %q holds an entry %q not in items", v, e.key)
			}
			vals, err := ix.fn(nil, e.obj)
			if err != nil || !slices.Contains(vals, v) {
				return fmt.Errorf("value %q holds %q whose values are %v (%v)", v, e.key, vals, err)
			}
			members++
		}
	}
	want := 0
	for key, e := range c.items {
		vals, _ := ix.fn(nil, e.obj)
		slices.Sort(vals)
		vals = slices.Compact(vals)
		for _, v := range vals {
			p := ix.values[v]
			if p == nil || !slices.Contains(slices.Collect(p.all()), e) {
				return fmt.Errorf("%q is missing under value %q", key, v)
			}
		}
		want += len(vals)
	}
	if members != want {
		return fmt.Errorf("%d postings members, want %d", members, want)
	}
	return nil
}

func checkPostings[T any](p *postings[T]) error {
	if p.len() == 0 {
		return fmt.Errorf("empty postings reachable")
	}
	if p.large != nil {
		if p.small != nil {
			return fmt.Errorf("both representations in use")
		}
		return nil
	}
	if len(p.small) > smallPostings {
		return fmt.Errorf("small form holds %d > %d", len(p.small), smallPostings)
	}
	for i, e := range p.small {
		if slices.Contains(p.small[i+1:], e) {
			return fmt.Errorf("duplicate member %q", e.key)
		}
	}
	return nil
}
