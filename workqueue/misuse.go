package workqueue

import "errors"

// ErrShuttingDown is returned by AddWithOptions once ShutDown or
// ShutDownWithDrain has been called. The item was not queued.
var ErrShuttingDown = errors.New("workqueue: queue is shutting down; item not added")

// MisuseKind names a call the queue rejected or ignored instead of panicking.
// Every occurrence is logged (klog, V(2)) and reported to Options.OnMisuse.
type MisuseKind int

const (
	// MisuseAddAfterShutDown: Add, AddAfter, AddRateLimited or AddWithOptions
	// after shutdown. The item is not queued (client-go drops it silently);
	// items queued before the shutdown are still handed out by Get.
	MisuseAddAfterShutDown MisuseKind = iota + 1
	// MisuseDoneNotProcessing: Done for an item that Get did not hand out (or
	// that is already done). The call changes nothing. client-go would queue
	// a second copy of an item that is waiting; this queue does not.
	MisuseDoneNotProcessing
)

// String returns a short name for logs.
func (k MisuseKind) String() string {
	switch k {
	case MisuseAddAfterShutDown:
		return "AddAfterShutDown"
	case MisuseDoneNotProcessing:
		return "DoneNotProcessing"
	default:
		return "Unknown"
	}
}

// reportMisuse logs and forwards one misuse. Call without holding q.mu.
func (q *Typed[T]) reportMisuse(kind MisuseKind, item T) {
	q.logger.V(2).Info("workqueue call ignored", "queue", q.name, "misuse", kind.String(), "item", item)
	if q.onMisuse != nil {
		q.onMisuse(kind)
	}
}
