package deltafifo

import "errors"

var (
	// ErrClosed is returned by Pop and PopBatch once the FIFO is closed and
	// drained, and by Add, Update, Delete, Replace and Resync after Close.
	ErrClosed = errors.New("deltafifo: queue is closed")
	// ErrInvalidObject wraps every error caused by an object the FIFO cannot
	// queue: a nil object or one whose key cannot be computed.
	ErrInvalidObject = errors.New("deltafifo: invalid object")
	// ErrNilObject is returned (wrapped in ErrInvalidObject) for a nil object.
	ErrNilObject = errors.New("deltafifo: nil object")
	// ErrEmptyKey is returned (wrapped in ErrInvalidObject) when the key
	// function returns an empty key without an error.
	ErrEmptyKey = errors.New("deltafifo: empty key")
	// ErrNilFunc is returned by Pop and PopBatch when given a nil function.
	ErrNilFunc = errors.New("deltafifo: nil process function")
	// ErrListMarksNeedBatch is returned by Pop on a FIFO with
	// Options.ListMarks: a list boundary is not a key, so only PopBatch
	// can hand it over.
	ErrListMarksNeedBatch = errors.New("deltafifo: a FIFO with list marks pops with PopBatch")
	// ErrTransform wraps an error returned by Options.Transform.
	ErrTransform = errors.New("deltafifo: transform failed")
)
