// Package workqueuetest has test helpers for work queues: a metrics
// provider that records every update, for listwatch's queue and for
// client-go's alike (both take client-go's MetricsProvider).
package workqueuetest

import (
	"slices"
	"sync"
	"testing"

	cgworkqueue "k8s.io/client-go/util/workqueue"
)

// Metric records every update of one metric. Safe for concurrent use.
type Metric struct {
	mu    sync.Mutex
	value float64
	obs   []float64
}

func (m *Metric) Inc()              { m.add(1) }
func (m *Metric) Dec()              { m.add(-1) }
func (m *Metric) add(d float64)     { m.mu.Lock(); m.value += d; m.mu.Unlock() }
func (m *Metric) Set(v float64)     { m.mu.Lock(); m.value = v; m.mu.Unlock() }
func (m *Metric) Observe(v float64) { m.mu.Lock(); m.obs = append(m.obs, v); m.mu.Unlock() }

// Get returns the metric's value and its observations so far.
func (m *Metric) Get() (float64, []float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.value, slices.Clone(m.obs)
}

// ExpectValue fails t unless m's value is want.
func (m *Metric) ExpectValue(t testing.TB, name string, want float64) {
	t.Helper()
	if got, _ := m.Get(); got != want {
		t.Fatalf("%s = %v, want %v", name, got, want)
	}
}

// ExpectObs fails t unless m's observations are want, in order.
func (m *Metric) ExpectObs(t testing.TB, name string, want ...float64) {
	t.Helper()
	if _, got := m.Get(); !slices.Equal(got, want) {
		t.Fatalf("%s observations = %v, want %v", name, got, want)
	}
}

// Provider hands out one Metric per kind (names are ignored): a
// client-go MetricsProvider.
type Provider struct {
	Depth, Adds, Latency, Work, Unfinished, Longest, Retries Metric
}

var _ cgworkqueue.MetricsProvider = (*Provider)(nil)

func (p *Provider) NewDepthMetric(string) cgworkqueue.GaugeMetric            { return &p.Depth }
func (p *Provider) NewAddsMetric(string) cgworkqueue.CounterMetric           { return &p.Adds }
func (p *Provider) NewLatencyMetric(string) cgworkqueue.HistogramMetric      { return &p.Latency }
func (p *Provider) NewWorkDurationMetric(string) cgworkqueue.HistogramMetric { return &p.Work }
func (p *Provider) NewUnfinishedWorkSecondsMetric(string) cgworkqueue.SettableGaugeMetric {
	return &p.Unfinished
}
func (p *Provider) NewLongestRunningProcessorSecondsMetric(string) cgworkqueue.SettableGaugeMetric {
	return &p.Longest
}
func (p *Provider) NewRetriesMetric(string) cgworkqueue.CounterMetric { return &p.Retries }
