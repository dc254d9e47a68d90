package store

import (
	"fmt"
	"hash/maphash"
	"slices"
)

// checkCore verifies the engine's documented invariants from scratch.
func checkCore[T any](c *core[T]) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.session != 0 && c.session != c.gen {
		return fmt.Errorf("open session %d is not the newest generation %d", c.session, c.gen)
	}
	if err := checkTable(&c.items); err != nil {
		return err
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
			if c.items.get(e.key) != e {
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
	for e := range c.items.all {
		key := e.key
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
	if p.isLarge() {
		if p.small != nil {
			return fmt.Errorf("both representations in use")
		}
		return checkEntrySet(&p.large)
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

// checkTable verifies the table's invariants: sizes, tags, probe runs
// without gaps, the fill limit and unique keys.
func checkTable[T any](t *table[T]) error {
	n := len(t.slots)
	if n != len(t.tags) || n != len(t.objs) || (n != 0 && (n < minTableSize || n%8 != 0)) {
		return fmt.Errorf("table sizes %d/%d", n, len(t.tags))
	}
	count, keys := 0, map[string]bool{}
	for i, e := range t.slots {
		if (e == nil) != (t.tags[i] == 0) {
			return fmt.Errorf("slot %d: entry %v, tag %d", i, e, t.tags[i])
		}
		if e == nil {
			var zero T
			if any(t.objs[i]) != any(zero) {
				return fmt.Errorf("empty slot %d retains an object", i)
			}
			continue
		}
		count++
		if any(t.objs[i]) != any(e.obj) {
			return fmt.Errorf("slot %d: objs out of sync", i)
		}
		if keys[e.key] {
			return fmt.Errorf("key %q twice", e.key)
		}
		keys[e.key] = true
		h := maphash.String(t.seed, e.key)
		if t.tags[i] != tagOf(h) {
			return fmt.Errorf("slot %d: wrong tag", i)
		}
		if e.id != uint32(h) {
			return fmt.Errorf("slot %d: id %d is not the key's hash", i, e.id)
		}
		for j := slotOf(h, n); j != i; j = t.next(j) {
			if t.slots[j] == nil {
				return fmt.Errorf("key %q at %d: gap at %d in its probe run", e.key, i, j)
			}
		}
		if t.get(e.key) != e {
			return fmt.Errorf("key %q not found", e.key)
		}
	}
	if count != t.count || count*4 > n*3 {
		return fmt.Errorf("count %d, counted %d, %d slots", t.count, count, n)
	}
	return nil
}

// checkEntrySet verifies the set's invariants: size, fill limit, probe runs
// without gaps and unique members.
func checkEntrySet[T any](s *entrySet[T]) error {
	n := len(s.slots)
	if n != 0 && (n < minSetSize || n&(n-1) != 0) {
		return fmt.Errorf("set size %d", n)
	}
	count, seen := 0, map[*entry[T]]bool{}
	for i, e := range s.slots {
		if e == nil {
			continue
		}
		count++
		if seen[e] {
			return fmt.Errorf("member %q twice", e.key)
		}
		seen[e] = true
		for j := homeOf(e, n-1); j != i; j = (j + 1) & (n - 1) {
			if s.slots[j] == nil {
				return fmt.Errorf("member %q at %d: gap at %d", e.key, i, j)
			}
		}
	}
	if count != s.count || count*8 > n*7 {
		return fmt.Errorf("count %d, counted %d, %d slots", s.count, count, n)
	}
	return nil
}
