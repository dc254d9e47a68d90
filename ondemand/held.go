package ondemand

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/listwatch/listwatch/internal/resourceversion"
)

// held is the table of whole objects, keyed as the metadata cache keys
// them. Reads take the read lock and stamp the entry atomically, so that
// concurrent reads of held objects do not serialise; the least recently
// read are found by their stamps when something has to go.
type held[T any] struct {
	mu sync.RWMutex
	// entries holds one entry per key; an entry is never mutated but for
	// its read stamp: a newer version replaces it.
	entries map[string]*entry[T]
	// bytes is the sum of the entries' bytes.
	bytes int64
	// pinned counts the entries with pinned set.
	pinned int
}

// entry is one held whole object.
type entry[T any] struct {
	obj T
	// rv is obj's resource version; num its value when it parses.
	rv  string
	num uint64
	ok  bool
	// bytes is what obj costs (store.ObjectBytes) plus the entry itself.
	bytes int64
	// pinned entries (Options.Hold) are never demoted for idleness.
	pinned bool
	// lastRead is the clock's UnixNano of the last read (or of the fetch).
	lastRead atomic.Int64
}

// entryOverhead is what an entry costs beside its object: the entry, its
// map slot and its key (a string shared with the metadata cache's, so
// not counted again).
const entryOverhead = 112

func newEntry[T any](obj T, rv string, bytes int64, pinned bool, now int64) *entry[T] {
	e := &entry[T]{obj: obj, rv: rv, bytes: bytes + entryOverhead, pinned: pinned}
	e.num, e.ok = resourceversion.Parse(rv)
	e.lastRead.Store(now)
	return e
}

// atLeast reports whether the entry is at least as new as the metadata
// resource version rv: numerically where both parse (KEP-5504), else only
// when they are equal.
func (e *entry[T]) atLeast(rv string) bool {
	if n, ok := resourceversion.Parse(rv); ok && e.ok {
		return e.num >= n
	}
	return e.rv == rv
}

func newHeld[T any]() *held[T] { return &held[T]{entries: map[string]*entry[T]{}} }

// get returns the held object for key if it is at least as new as rv,
// stamping it read at now.
func (h *held[T]) get(key, rv string, now int64) (obj T, ok bool) {
	h.mu.RLock()
	e := h.entries[key]
	h.mu.RUnlock()
	if e == nil || !e.atLeast(rv) {
		return obj, false
	}
	e.lastRead.Store(now)
	return e.obj, true
}

// peek returns the entry for key, nil if none, without stamping it.
func (h *held[T]) peek(key string) *entry[T] {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.entries[key]
}

// put holds e under key unless an entry at least as new is there already
// (a fetch racing another), then demotes the least recently read entries
// other than e until the bytes are within budget (negative: none). It
// reports whether e is held, and returns the demoted.
func (h *held[T]) put(key string, e *entry[T], budget int64) (kept bool, demoted int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if old := h.entries[key]; old != nil {
		if old.atLeast(e.rv) {
			return false, 0
		}
		h.removeLocked(key, old)
	}
	if budget >= 0 && e.bytes > budget {
		return false, 0
	}
	h.entries[key] = e
	h.bytes += e.bytes
	if e.pinned {
		h.pinned++
	}
	if budget >= 0 && h.bytes > budget {
		demoted = h.shrinkLocked(budget, key)
	}
	return true, demoted
}

// shrinkLocked demotes the least recently read entries but keep until
// the bytes are within budget, and then some more: to 7/8 of it, so that
// a cache at its budget does not sort its entries on every fetch.
func (h *held[T]) shrinkLocked(budget int64, keep string) int {
	type stamped struct {
		key  string
		at   int64
		size int64
	}
	all := make([]stamped, 0, len(h.entries))
	for k, e := range h.entries {
		if k != keep {
			all = append(all, stamped{k, e.lastRead.Load(), e.bytes})
		}
	}
	slices.SortFunc(all, func(a, b stamped) int { return cmp.Compare(a.at, b.at) })
	target := budget - budget/8
	n := 0
	for _, s := range all {
		if h.bytes <= target {
			break
		}
		h.removeLocked(s.key, h.entries[s.key])
		n++
	}
	return n
}

// drop demotes key's entry if it is older than rv (rv "" drops it
// whatever its version); it reports whether it did.
func (h *held[T]) drop(key, rv string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.entries[key]
	if e == nil || (rv != "" && e.atLeast(rv)) {
		return false
	}
	h.removeLocked(key, e)
	return true
}

// idle demotes the entries not pinned and not read since cutoff.
func (h *held[T]) idle(cutoff int64) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for k, e := range h.entries {
		if !e.pinned && e.lastRead.Load() < cutoff {
			h.removeLocked(k, e)
			n++
		}
	}
	return n
}

func (h *held[T]) removeLocked(key string, e *entry[T]) {
	delete(h.entries, key)
	h.bytes -= e.bytes
	if e.pinned {
		h.pinned--
	}
}

// figures returns the number of entries, the pinned ones and their bytes.
func (h *held[T]) figures() (objects, pinned int, bytes int64) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.entries), h.pinned, h.bytes
}
