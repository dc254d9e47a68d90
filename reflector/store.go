package reflector

import "github.com/listwatch/listwatch/store"

// Store is the sink a Reflector writes into: the subset of a cache that the
// List-then-Watch engine needs. It is defined here, by its consumer, so that
// any store, queue or test double with these four methods can be fed.
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
