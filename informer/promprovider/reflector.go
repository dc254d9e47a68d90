package promprovider

import (
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/reflector"
)

// numReasons is the number of reflector.Reason values (ReasonOther is the
// last).
const numReasons = int(reflector.ReasonOther) + 1

// eventTypes are the watch event types counted by name; any other type is
// counted as "other".
var eventTypes = [...]watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error, "other"}

// ReflectorMetrics counts one reflector's requests, relists, errors and
// events. It implements reflector.Metrics with atomic counters only: no
// lock, no allocation per call. The Provider that made it reads the
// counters at scrape time.
type ReflectorMetrics struct {
	now func() time.Time

	lists, watches atomic.Int64
	relists        [numReasons]atomic.Int64
	errors         [numReasons]atomic.Int64
	events         [len(eventTypes)]atomic.Int64

	// started is when the first list cycle began (UnixNano, 0: not yet);
	// firstSync how long it took to the first resource version reported,
	// which the reflector reports once a list has been handed to the store
	// (-1: not yet).
	started   atomic.Int64
	firstSync atomic.Int64

	// processing is the informer's processing latency
	// (informer.ProcessingObserver).
	processing latency
}

var _ reflector.Metrics = (*ReflectorMetrics)(nil)

func newReflectorMetrics(now func() time.Time) *ReflectorMetrics {
	m := &ReflectorMetrics{now: now}
	m.firstSync.Store(-1)
	return m
}

// List implements reflector.Metrics.
func (m *ReflectorMetrics) List() { m.lists.Add(1) }

// Watch implements reflector.Metrics.
func (m *ReflectorMetrics) Watch() { m.watches.Add(1) }

// Relist implements reflector.Metrics. The first cycle (cause ReasonNone)
// starts the time-to-first-sync clock.
func (m *ReflectorMetrics) Relist(cause reflector.Reason) {
	if cause == reflector.ReasonNone && m.started.Load() == 0 {
		m.started.CompareAndSwap(0, m.now().UnixNano())
	}
	m.relists[clampReason(cause)].Add(1)
}

// Event implements reflector.Metrics.
func (m *ReflectorMetrics) Event(t watch.EventType) {
	i := len(eventTypes) - 1
	switch t {
	case watch.Added:
		i = 0
	case watch.Modified:
		i = 1
	case watch.Deleted:
		i = 2
	case watch.Bookmark:
		i = 3
	case watch.Error:
		i = 4
	}
	m.events[i].Add(1)
}

// Observing implements informer.ProcessingObserver: always.
func (m *ReflectorMetrics) Observing() bool { return true }

// ObserveProcessing implements informer.ProcessingObserver: the time a
// batch popped from the informer's queue took to apply and hand to the
// handlers (informer_processing_latency_seconds).
func (m *ReflectorMetrics) ObserveProcessing(d time.Duration) { m.processing.observe(d) }

// Error implements reflector.Metrics.
func (m *ReflectorMetrics) Error(class reflector.Reason) { m.errors[clampReason(class)].Add(1) }

// ResourceVersion implements reflector.Metrics. The first call after the
// first cycle started fixes the time to first sync; the resource version
// itself is exported from the informer's Status
// (informer_store_resource_version).
func (m *ReflectorMetrics) ResourceVersion(string) {
	if m.firstSync.Load() >= 0 {
		return
	}
	if start := m.started.Load(); start != 0 {
		m.firstSync.CompareAndSwap(-1, max(m.now().UnixNano()-start, 0))
	}
}

func clampReason(r reflector.Reason) int {
	if r < 0 || int(r) >= numReasons {
		return int(reflector.ReasonOther)
	}
	return int(r)
}

// Relists returns the list cycles counted so far by cause
// (reflector.Reason names; "None" is the first list), leaving out causes
// never seen.
func (m *ReflectorMetrics) Relists() map[string]int64 {
	out := map[string]int64{}
	for r := range numReasons {
		if n := m.relists[r].Load(); n > 0 {
			out[reflector.Reason(r).String()] = n
		}
	}
	return out
}
