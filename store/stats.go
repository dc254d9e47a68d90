package store

// Stats is a point-in-time summary of a store, for a metrics collector to
// poll (the store itself keeps no metrics and calls no hooks on the write
// path).
type Stats struct {
	// Objects is the number of stored objects.
	Objects int
	// IndexValues maps each index name to its number of distinct values.
	IndexValues map[string]int
	// ResourceVersion is the last recorded resource version.
	ResourceVersion string
	// Replacing is true while an incremental replace session is open.
	Replacing bool
}

// Stats returns a summary of the store.
func (r Reader[T]) Stats() Stats { return r.c.stats() }

func (c *core[T]) stats() Stats {
	c.mu.RLock()
	defer c.mu.RUnlock()
	st := Stats{
		Objects:         c.items.count,
		IndexValues:     make(map[string]int, len(c.indexes)),
		ResourceVersion: c.rv,
		Replacing:       c.session != 0,
	}
	for _, ix := range c.indexes {
		st.IndexValues[ix.name] = len(ix.values)
	}
	return st
}
