package factory

import (
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
)

// Metrics is what an observer (Observe) gives each informer of the
// factory: its reflector's counters and the time each batch took to
// process (informer.ProcessingObserver). informer/promprovider's
// ReflectorMetrics is one.
type Metrics interface {
	reflector.Metrics
	ObserveProcessing(d time.Duration)
}

// Observe sends the counters of every informer of the factory that was
// built without metrics of its own (Options.Reflector.Metrics, and
// Options.Processing) to observe(name): those built already and those
// built later. A metrics provider calls it when it is attached to the
// factory (informer/promprovider does in Register), so that one call wires
// everything, whichever comes first. A later call replaces the observer;
// nil detaches it.
func (f *Factory) Observe(observe func(name string) Metrics) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.observe = observe
	for _, sw := range f.switches {
		sw.attach(observe)
	}
}

// switchLocked returns the metrics of the informer called name: a switch
// that forwards to the factory's observer, if any is or will be attached.
// f.mu held.
func (f *Factory) switchLocked(name string) *metricsSwitch {
	sw := &metricsSwitch{name: name}
	sw.attach(f.observe)
	f.switches = append(f.switches, sw)
	return sw
}

// metricsSwitch is a reflector.Metrics and an informer.ProcessingObserver
// that forwards to the Metrics its factory's observer gave it, or discards
// while there are none (and then does not ask for processing times). The
// forwarding costs one atomic load per count and allocates nothing.
type metricsSwitch struct {
	// name is the informer's name, as given to the observer.
	name string
	// to holds the current target; nil means discard.
	to atomic.Pointer[metricsTarget]
}

var (
	_ reflector.Metrics           = (*metricsSwitch)(nil)
	_ informer.ProcessingObserver = (*metricsSwitch)(nil)
)

// metricsTarget boxes an interface value for the atomic pointer.
type metricsTarget struct{ m Metrics }

func (s *metricsSwitch) attach(observe func(string) Metrics) {
	if observe != nil {
		if m := observe(s.name); m != nil {
			s.to.Store(&metricsTarget{m: m})
			return
		}
	}
	s.to.Store(nil)
}

func (s *metricsSwitch) target() Metrics {
	if t := s.to.Load(); t != nil {
		return t.m
	}
	return discard{}
}

// Observing reports whether an observer is attached: an informer nobody
// observes reads no clock for its batches.
func (s *metricsSwitch) Observing() bool { return s.to.Load() != nil }

func (s *metricsSwitch) ObserveProcessing(d time.Duration) { s.target().ObserveProcessing(d) }
func (s *metricsSwitch) List()                             { s.target().List() }
func (s *metricsSwitch) Watch()                            { s.target().Watch() }
func (s *metricsSwitch) Relist(cause reflector.Reason)     { s.target().Relist(cause) }
func (s *metricsSwitch) Event(t watch.EventType)           { s.target().Event(t) }
func (s *metricsSwitch) Error(class reflector.Reason)      { s.target().Error(class) }
func (s *metricsSwitch) ResourceVersion(rv string)         { s.target().ResourceVersion(rv) }

// discard is the Metrics of a switch without an observer.
type discard struct{ reflector.NoopMetrics }

func (discard) ObserveProcessing(time.Duration) {}
