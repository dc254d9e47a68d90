package retrywatcher

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Input is something that happened outside the Machine: the outcome of an
// effect it asked for, a tick of time, or a stop. Machine.Step takes one at
// a time, with the time it was observed. The set is closed: WatchOpened,
// WatchFailed, WatchEvent, WatchClosed, Listed, ListFailed, Tick and Stop.
type Input interface{ isInput() }

// WatchOpened says the watch asked for by OpenWatch is open.
type WatchOpened struct{}

// WatchFailed is the error that prevented OpenWatch's watch from opening.
type WatchFailed struct{ Err error }

// WatchEvent is one event from the open watch.
type WatchEvent struct{ Event watch.Event }

// WatchClosed says the open watch's result channel closed. How long the
// watch lasted is measured from the WatchOpened step to this one.
type WatchClosed struct{}

// Listed is a completed quorum list in relist mode, answering List: its
// items and the list's resource version.
type Listed struct {
	Items           []runtime.Object
	ResourceVersion string
}

// ListFailed is the error answered to List.
type ListFailed struct{ Err error }

// Tick says time has passed; the time itself is Step's now argument. It
// ends a Wait once now reaches Machine.Deadline.
type Tick struct{}

// Stop ends the machine at the consumer's request.
type Stop struct{}

func (WatchOpened) isInput() {}
func (WatchFailed) isInput() {}
func (WatchEvent) isInput()  {}
func (WatchClosed) isInput() {}
func (Listed) isInput()      {}
func (ListFailed) isInput()  {}
func (Tick) isInput()        {}
func (Stop) isInput()        {}
