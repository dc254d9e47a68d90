package reflector

import "k8s.io/apimachinery/pkg/watch"

// Metrics receives counters from a reflector. Every method must be cheap and
// must not block; it is called from the reflector's own goroutine.
type Metrics interface {
	// List counts one list request (one page).
	List()
	// Watch counts one watch request, streaming lists included.
	Watch()
	// Relist counts a new list cycle and its cause; ReasonNone for the first.
	Relist(cause Reason)
	// Event counts one watch event by type, bookmarks and errors included.
	Event(eventType watch.EventType)
	// Error counts one error by class.
	Error(class Reason)
	// ResourceVersion reports the last synced resource version.
	ResourceVersion(rv string)
}

// NoopMetrics discards everything; it is the default.
type NoopMetrics struct{}

func (NoopMetrics) List()                  {}
func (NoopMetrics) Watch()                 {}
func (NoopMetrics) Relist(Reason)          {}
func (NoopMetrics) Event(watch.EventType)  {}
func (NoopMetrics) Error(Reason)           {}
func (NoopMetrics) ResourceVersion(string) {}
