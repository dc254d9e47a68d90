package store

import "sync"

// entry is one stored object. The items map and every postings list point
// at the same entry, so an update that leaves the index values alone only
// rewrites obj and touches no map.
type entry[T any] struct {
	// key is the store key; it never changes for the life of the entry.
	key string
	// obj is the current object. Written only under core.mu held for
	// writing; read under core.mu held for reading.
	obj T
	// mark is the replace generation in which the entry was last written
	// (see core.gen). Commit removes entries whose mark is not the session's.
	mark uint32
	// id is the low 32 bits of the key's hash in the store's table, set
	// by table.insert: the table finds the entry's home slot from it
	// without hashing the key again, and postings sets hash by it. It
	// need not be unique, and fits in padding: the entry stays 32 bytes.
	id uint32
}

// core is the generic engine shared by the typed Store[T] and the
// client-go drop-in (which stores any). It owns the lock; every method on it
// takes the lock itself, and the *Locked helpers expect it held.
type core[T any] struct {
	mu sync.RWMutex

	// items holds every entry, keyed by entry.key. Every entry reachable
	// from an index is in items, and vice versa.
	items table[T]

	// indexes holds the indexes in the order they were added; names are
	// unique. Each index holds exactly the entries of items under the values
	// its function returns for entry.obj.
	indexes []*index[T]

	// rv is the last resource version the writer reported (object writes,
	// Replace, Commit, Bookmark).
	rv string

	// gen is the newest replace generation; entries written since the last
	// BeginReplace carry it as their mark. Never 0 after the first session.
	gen uint32
	// session is the generation of the open replace session, or 0 when no
	// session is open. When non-zero it equals gen.
	session uint32

	// snaps holds the published snapshots of large index values (see
	// snapshot.go).
	snaps snapshots[T]

	// namelessKeys makes "" a valid key of the typed writes
	// (Options.NamelessKeys); set at construction only.
	namelessKeys bool
}

func newCore[T any]() *core[T] {
	return &core[T]{items: newTable[T]()}
}

// indexLocked returns the index called name, or nil.
func (c *core[T]) indexLocked(name string) *index[T] {
	for _, ix := range c.indexes {
		if ix.name == name {
			return ix
		}
	}
	return nil
}
