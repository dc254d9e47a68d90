package store

import "errors"

var (
	// ErrNilObject is returned when a nil object is given where an object is required.
	ErrNilObject = errors.New("listwatch/store: nil object")
	// ErrNoName is returned by NamespacedKey for an object whose metadata has no name.
	ErrNoName = errors.New("listwatch/store: object has no name, so no key")
	// ErrUnknownIndex is returned by index queries that name an index the
	// store does not have.
	ErrUnknownIndex = errors.New("listwatch/store: no such index")
	// ErrIndexConflict is returned when an indexer is added under a name that
	// is already taken (including the built-in NamespaceIndex).
	ErrIndexConflict = errors.New("listwatch/store: indexer conflict")
	// ErrInvalidIndexer is returned for an indexer with an empty name or a
	// nil function.
	ErrInvalidIndexer = errors.New("listwatch/store: invalid indexer")
	// ErrIndexFunc wraps an error returned by an index function. The write
	// that triggered it is rejected and leaves the store unchanged.
	ErrIndexFunc = errors.New("listwatch/store: index function failed")
	// ErrReplaceClosed is returned by a ReplaceSession that was committed,
	// aborted, or superseded by a newer Replace or BeginReplace.
	ErrReplaceClosed = errors.New("listwatch/store: replace session closed")
	// ErrNoKeyFunc is returned by the client-go drop-in when it was built
	// with a nil key function.
	ErrNoKeyFunc = errors.New("listwatch/store: nil key function")
)
