package factory

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/reflector"
)

// countingMetrics counts events; the rest is discarded.
type countingMetrics struct {
	reflector.NoopMetrics
	events int
}

func (c *countingMetrics) Event(watch.EventType)             { c.events++ }
func (c *countingMetrics) ObserveProcessing(d time.Duration) {}

// A factory informer's reflector metrics forward to the observer attached
// at any time, and discard without one; either way a count allocates
// nothing, so metrics off cost the event path no allocation.
func TestMetricsSwitch(t *testing.T) {
	f := New(Options{})
	sw := func() *metricsSwitch {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.switchLocked("early")
	}()
	if n := testing.AllocsPerRun(100, func() { sw.Event(watch.Modified) }); n != 0 {
		t.Fatalf("a count with no observer allocates %v times", n)
	}
	if sw.Observing() {
		t.Fatal("a factory informer with no observer reads the clock for processing times")
	}
	got := map[string]*countingMetrics{}
	f.Observe(func(name string) Metrics {
		got[name] = &countingMetrics{}
		return got[name]
	})
	sw.Event(watch.Modified)
	if n := testing.AllocsPerRun(100, func() { sw.Event(watch.Modified) }); n != 0 {
		t.Fatalf("a count with an observer allocates %v times", n)
	}
	if !sw.Observing() {
		t.Fatal("a factory informer with an observer does not time its batches")
	}
	if got["early"] == nil || got["early"].events != 102 {
		t.Fatalf("the observer attached after the informer was built got %+v", got["early"])
	}
	f.Observe(nil)
	sw.Event(watch.Modified)
	if got["early"].events != 102 {
		t.Fatal("a detached observer still counts")
	}
}
