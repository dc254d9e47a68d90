package store

import (
	"fmt"
	"slices"
)

// Reads hold the read lock only while copying object references (8 or 16
// bytes each), never while calling back into user code other than index
// functions and filters given to the read itself.

func unknownIndex(name string) error {
	return fmt.Errorf("%w: %q", ErrUnknownIndex, name)
}

func (c *core[T]) get(key string) (obj T, ok bool) {
	c.mu.RLock()
	e := c.items.get(key)
	if e != nil {
		obj, ok = e.obj, true
	}
	c.mu.RUnlock()
	return obj, ok
}

// getBytes is get for a key in a byte slice, without allocating.
func (c *core[T]) getBytes(key []byte) (obj T, ok bool) {
	c.mu.RLock()
	e := c.items.getBytes(key)
	if e != nil {
		obj, ok = e.obj, true
	}
	c.mu.RUnlock()
	return obj, ok
}

func (c *core[T]) length() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.items.count
}

func (c *core[T]) resourceVersion() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rv
}

// appendAll appends every object that keep accepts (all if keep is nil).
func (c *core[T]) appendAll(dst []T, keep func(T) bool) []T {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if dst == nil {
		dst = make([]T, 0, c.items.count)
	}
	for e := range c.items.all {
		if keep == nil || keep(e.obj) {
			dst = append(dst, e.obj)
		}
	}
	return dst
}

func (c *core[T]) listKeys() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	keys := make([]string, 0, c.items.count)
	for e := range c.items.all {
		keys = append(keys, e.key)
	}
	return keys
}

// appendIndexed appends the objects filed under value in index name that
// keep accepts (all if keep is nil).
func (c *core[T]) appendIndexed(dst []T, name, value string, keep func(T) bool) ([]T, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ix := c.indexLocked(name)
	if ix == nil {
		return dst, unknownIndex(name)
	}
	p := ix.values[value]
	if dst == nil {
		n := 0
		if p != nil && keep == nil {
			n = p.len()
		}
		dst = make([]T, 0, n)
	}
	if p == nil {
		return dst, nil
	}
	for e := range p.all() {
		if keep == nil || keep(e.obj) {
			dst = append(dst, e.obj)
		}
	}
	return dst, nil
}

// indexKeys returns the sorted keys filed under value in index name.
func (c *core[T]) indexKeys(name, value string) ([]string, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ix := c.indexLocked(name)
	if ix == nil {
		return nil, unknownIndex(name)
	}
	p := ix.values[value]
	if p == nil {
		return []string{}, nil
	}
	keys := make([]string, 0, p.len())
	for e := range p.all() {
		keys = append(keys, e.key)
	}
	slices.Sort(keys)
	return keys, nil
}

// indexValues returns every value of index name, unsorted.
func (c *core[T]) indexValues(name string) ([]string, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ix := c.indexLocked(name)
	if ix == nil {
		return []string{}, unknownIndex(name)
	}
	vals := make([]string, 0, len(ix.values))
	for v := range ix.values {
		vals = append(vals, v)
	}
	return vals, nil
}

// matching returns the objects that share at least one value of index name
// with obj, each once.
func (c *core[T]) matching(name string, obj T) ([]T, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ix := c.indexLocked(name)
	if ix == nil {
		return nil, unknownIndex(name)
	}
	vals, err := ix.fn(nil, obj)
	if err != nil {
		return nil, err
	}
	if len(vals) == 1 {
		out := []T{}
		if p := ix.values[vals[0]]; p != nil {
			out = make([]T, 0, p.len())
			for e := range p.all() {
				out = append(out, e.obj)
			}
		}
		return out, nil
	}
	return ix.union(vals), nil
}

// union returns the objects filed under any of vals, each once.
func (ix *index[T]) union(vals []string) []T {
	seen := make(map[*entry[T]]struct{})
	out := []T{}
	for _, v := range vals {
		p := ix.values[v]
		if p == nil {
			continue
		}
		for e := range p.all() {
			if _, dup := seen[e]; !dup {
				seen[e] = struct{}{}
				out = append(out, e.obj)
			}
		}
	}
	return out
}

// indexNames returns the index names in the order they were added.
func (c *core[T]) indexNames() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	names := make([]string, len(c.indexes))
	for i, ix := range c.indexes {
		names[i] = ix.name
	}
	return names
}
