package reflector

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Input is something that happened outside the machine: the result of an
// effect it asked for, a tick of time, or a stop. The set is closed.
type Input interface{ isInput() }

// ListPage is one page answered to a List effect: its items (of any type;
// the machine drops those that are not T), the list's resource version and
// its continue token ("" on the last page).
type ListPage struct {
	Items           []runtime.Object
	ResourceVersion string
	Continue        string
	// Shared says that Items point into one array, the response's (a
	// typed list's Items, a slice of structs): each item must become an
	// object of its own before a store keeps it, or one kept object would
	// pin the whole response. The machine passes it on (Replace.Copy,
	// ReplacePage.Copy) and the shell copies the items as it hands them
	// to the store, a page at a time when the store takes pages.
	Shared bool
}

// ListFailed is the error answered to a List effect.
type ListFailed struct{ Err error }

// WatchOpened says the watch asked for by the last Watch effect is open.
type WatchOpened struct{}

// WatchFailed is the error that prevented the last Watch effect's watch from
// opening.
type WatchFailed struct{ Err error }

// WatchEvent is one event from the open watch.
type WatchEvent struct{ Event watch.Event }

// WatchClosed says the open watch's result channel was closed.
type WatchClosed struct{}

// ReplaceFailed says the store refused the last Replace effect; the effects
// that followed it in the same batch were not executed.
type ReplaceFailed struct{ Err error }

// Tick says time has passed; the time itself is Step's now argument.
type Tick struct{}

// Stop ends the machine: it answers StopWatch if a watch may be open and
// enters PhaseStopped.
type Stop struct{}

// Relist asks for a new list cycle now, because what the store should
// hold changed on the owner's side (a sharded source's assignment, a new
// selector). It is not a failure: no backoff, the failure count is left
// alone, and the cycle is counted with cause ReasonRequested. Requests are
// paced by a bucket: 3 may start cycles back to back, then one per
// Backoff.Initial; a request that finds the bucket empty waits for a token,
// and any number of requests in that time make one cycle (a list begun
// meanwhile for any reason serves them). During a backoff a request makes the cycle that follows a relist,
// at the time the backoff allows; once stopped it is ignored.
type Relist struct{}

func (ListPage) isInput()      {}
func (ListFailed) isInput()    {}
func (WatchOpened) isInput()   {}
func (WatchFailed) isInput()   {}
func (WatchEvent) isInput()    {}
func (WatchClosed) isInput()   {}
func (ReplaceFailed) isInput() {}
func (Tick) isInput()          {}
func (Stop) isInput()          {}
func (Relist) isInput()        {}
