package retrywatcher

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// Effect is an instruction from the Machine to the shell that runs it. The
// shell executes effects in order and reports their outcomes back as
// Inputs.
// The set of effects is closed: OpenWatch, CloseWatch, List, Deliver, Drop,
// Wait and Finish.
type Effect interface {
	isEffect()
	fmt.Stringer
}

// OpenWatch asks the shell to open a watch from ResourceVersion with
// bookmarks allowed. It answers with WatchOpened or WatchFailed.
type OpenWatch struct{ ResourceVersion string }

// CloseWatch asks the shell to stop the watch it has open, if any.
type CloseWatch struct{}

// List asks the shell to list the resource with a quorum read (RV="").
// It answers with Listed or ListFailed. Only emitted in relist mode.
type List struct{}

// Deliver asks the shell to hand Event to the consumer.
type Deliver struct{ Event watch.Event }

// Drop reports an event the machine discarded and why; the shell counts and
// logs it. Nothing is sent to the consumer.
type Drop struct {
	Event  watch.Event
	Reason DropReason
}

// Wait says the machine waits For (until its Deadline) before retrying;
// Reason names the failure. The shell arms its timer from Machine.Deadline
// and answers with Tick.
type Wait struct {
	For    time.Duration
	Reason string
}

// Finish tells the shell the machine has stopped for good. Err is nil after
// Stop and says why otherwise.
type Finish struct{ Err error }

// DropReason says why an event was discarded.
type DropReason string

const (
	// DropStale marks an event whose RV is not newer than the last one delivered.
	DropStale DropReason = "stale"
)

func (OpenWatch) isEffect()  {}
func (CloseWatch) isEffect() {}
func (List) isEffect()       {}
func (Deliver) isEffect()    {}
func (Drop) isEffect()       {}
func (Wait) isEffect()       {}
func (Finish) isEffect()     {}

func (e OpenWatch) String() string { return fmt.Sprintf("open-watch rv=%s", e.ResourceVersion) }
func (CloseWatch) String() string  { return "close-watch" }
func (List) String() string        { return "list rv=\"\"" }
func (e Deliver) String() string   { return "deliver " + describeEvent(e.Event) }
func (e Drop) String() string {
	return fmt.Sprintf("drop %s reason=%s", describeEvent(e.Event), e.Reason)
}
func (e Wait) String() string { return fmt.Sprintf("wait %s reason=%s", e.For, e.Reason) }
func (e Finish) String() string {
	if e.Err == nil {
		return "finish"
	}
	return "finish err=" + e.Err.Error()
}
