package informer

import (
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/reflector"
)

// ObserveReflectors sends the reflector counters of every informer of the
// factory that was built without its own Options.Reflector.Metrics to
// observe(name): those built already and those built later. A metrics
// provider calls it when it is attached to the factory (informer/promprovider
// does in Register), so that one call wires everything, whichever comes
// first. A later call replaces the observer; nil detaches it.
func (f *Factory) ObserveReflectors(observe func(name string) reflector.Metrics) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.observe = observe
	for _, sw := range f.switches {
		sw.attach(observe, sw.name)
	}
}

// ProcessingObserver is an optional capability of the reflector.Metrics
// an informer is given (Options.Reflector.Metrics, or a factory
// observer's): it is told how long each batch popped from the queue took
// to apply to the cache and hand to the handlers (client-go's
// informer_processing_latency_seconds). It must be cheap and must not
// block; it is called from the informer's processing goroutine.
type ProcessingObserver interface {
	ObserveProcessing(d time.Duration)
}

// reflectorMetricsLocked returns the metrics to give the reflector of the
// informer called name: a switch that forwards to the factory's observer,
// if any is or will be attached. f.mu held.
func (f *Factory) reflectorMetricsLocked(name string) reflector.Metrics {
	sw := &metricsSwitch{name: name}
	sw.attach(f.observe, name)
	f.switches = append(f.switches, sw)
	return sw
}

// metricsSwitch is a reflector.Metrics that forwards to the metrics its
// factory's observer gave it, or discards while there are none. The
// forwarding costs one atomic load per count and allocates nothing.
type metricsSwitch struct {
	// name is the informer's name, as given to the observer.
	name string
	// to holds the current target; nil means discard.
	to atomic.Pointer[metricsTarget]
}

// metricsTarget boxes an interface value for the atomic pointer.
type metricsTarget struct{ m reflector.Metrics }

func (s *metricsSwitch) attach(observe func(string) reflector.Metrics, name string) {
	if observe == nil {
		s.to.Store(nil)
		return
	}
	if m := observe(name); m != nil {
		s.to.Store(&metricsTarget{m: m})
		return
	}
	s.to.Store(nil)
}

func (s *metricsSwitch) target() reflector.Metrics {
	if t := s.to.Load(); t != nil {
		return t.m
	}
	return reflector.NoopMetrics{}
}

// ObserveProcessing forwards to the target if it is a ProcessingObserver.
func (s *metricsSwitch) ObserveProcessing(d time.Duration) {
	if po, ok := s.target().(ProcessingObserver); ok {
		po.ObserveProcessing(d)
	}
}

// observing reports whether the target wants processing times, so that
// the informer reads no clock for a factory informer nobody observes.
func (s *metricsSwitch) observing() bool {
	_, ok := s.target().(ProcessingObserver)
	return ok
}

// observing reports whether po wants processing times now: a
// metricsSwitch only while its target does, anything else always.
func observing(po ProcessingObserver) bool {
	if sw, ok := po.(*metricsSwitch); ok {
		return sw.observing()
	}
	return po != nil
}

func (s *metricsSwitch) List()                         { s.target().List() }
func (s *metricsSwitch) Watch()                        { s.target().Watch() }
func (s *metricsSwitch) Relist(cause reflector.Reason) { s.target().Relist(cause) }
func (s *metricsSwitch) Event(t watch.EventType)       { s.target().Event(t) }
func (s *metricsSwitch) Error(class reflector.Reason)  { s.target().Error(class) }
func (s *metricsSwitch) ResourceVersion(rv string)     { s.target().ResourceVersion(rv) }
