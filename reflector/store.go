package reflector

import "github.com/listwatch/listwatch/store"

// Store is the sink a Reflector writes into: the subset of a cache that the
// List-then-Watch engine needs. It is defined here, by its consumer, so that
// any store, queue or test double with these four methods can be fed. The
// suite in package storetest checks an implementation against the
// contract (store.Store, deltafifo.FIFO and the informer's sink run it).
//
// The reflector calls these methods from a single goroutine and never
// concurrently with each other.
type Store[T store.Object] interface {
	// Add records an object seen in an ADDED watch event.
	Add(obj T) error
	// Update records an object seen in a MODIFIED watch event.
	Update(obj T) error
	// Delete records the last state of an object seen in a DELETED event.
	Delete(obj T) error
	// Replace swaps the whole content for items, the result of a complete
	// list (or streaming list) at resourceVersion. It is called once per
	// completed list, never with a partial result.
	Replace(items []T, resourceVersion string) error
}

// ResourceVersionUpdater is an optional capability of a Store: it is told
// the resource version carried by a BOOKMARK event, which advances the
// reflector's position without any object change.
type ResourceVersionUpdater interface {
	UpdateResourceVersion(resourceVersion string)
}

// UpdateResourceVersion tells s about a resource version reached without an
// object change, if s implements ResourceVersionUpdater. It reports whether
// s was told. This helper is the only place the capability is probed.
func UpdateResourceVersion[T store.Object](s Store[T], resourceVersion string) bool {
	u, ok := s.(ResourceVersionUpdater)
	if !ok {
		return false
	}
	u.UpdateResourceVersion(resourceVersion)
	return true
}

// PagedStore is an optional capability of a Store: it takes a paginated
// list a page at a time instead of as one Replace, so that neither the
// reflector nor the store holds the whole new list at once, and the
// objects it replaces can be released while later pages are still coming.
// A reflector whose store has it calls ReplacePage for every page of a
// list of more than one page, then ReplaceEnd; a streaming list is cut
// into pages of Config.PageSize as its initial events arrive. A list of
// one page, or a streaming list that fits in one, still arrives as one
// Replace.
//
// Until ReplaceEnd, readers of the store may see a mix of the old content
// and the new. ReplacePage may block, to hold the reflector back until the
// consumer has caught up (the informer's sink does so); it is called from
// the reflector's goroutine, like every other Store method.
type PagedStore[T store.Object] interface {
	Store[T]
	// ReplacePage takes one page of the list in progress. first says it
	// is the first page of a new list: a list that was begun and never
	// ended is abandoned, and what it wrote stays until the new list ends.
	ReplacePage(items []T, first bool) error
	// ReplaceEnd completes the list begun by the last first page, at
	// resourceVersion: whatever the store held when that list began and
	// neither the list nor a write since has mentioned is deleted.
	ReplaceEnd(resourceVersion string) error
}
