package workqueue

import (
	"time"

	cgworkqueue "k8s.io/client-go/util/workqueue"
)

// The metric interfaces are client-go's own (aliases, not copies), so a
// client-go MetricsProvider plugs into this queue and ours into client-go.
type (
	// MetricsProvider creates the metrics of a named queue.
	MetricsProvider = cgworkqueue.MetricsProvider
	// GaugeMetric goes up and down.
	GaugeMetric = cgworkqueue.GaugeMetric
	// SettableGaugeMetric is set to a value.
	SettableGaugeMetric = cgworkqueue.SettableGaugeMetric
	// CounterMetric only goes up.
	CounterMetric = cgworkqueue.CounterMetric
	// HistogramMetric records observations.
	HistogramMetric = cgworkqueue.HistogramMetric
)

// queueMetrics holds one queue's metrics. Callers hold Typed.mu. Times come
// from the entries (addedAt, startedAt), so no per-item map is needed.
type queueMetrics struct {
	depth                   GaugeMetric     // items added and not yet handed out
	adds                    CounterMetric   // adds that were not collapsed
	latency                 HistogramMetric // seconds from add to Get
	workDuration            HistogramMetric // seconds from Get to Done
	unfinishedWork          SettableGaugeMetric
	longestRunningProcessor SettableGaugeMetric
	retries                 CounterMetric // AddAfter and AddRateLimited calls
}

func newQueueMetrics(p MetricsProvider, name string) *queueMetrics {
	return &queueMetrics{
		depth:                   p.NewDepthMetric(name),
		adds:                    p.NewAddsMetric(name),
		latency:                 p.NewLatencyMetric(name),
		workDuration:            p.NewWorkDurationMetric(name),
		unfinishedWork:          p.NewUnfinishedWorkSecondsMetric(name),
		longestRunningProcessor: p.NewLongestRunningProcessorSecondsMetric(name),
		retries:                 p.NewRetriesMetric(name),
	}
}

func seconds(ns int64) float64 { return time.Duration(ns).Seconds() }

// add records an add that was not collapsed, stamping the entry's addedAt.
func (m *queueMetrics) add(addedAt *int64, now int64) {
	m.adds.Inc()
	m.depth.Inc()
	*addedAt = now
}

// get records a hand-out by Get, stamping the entry's startedAt.
func (m *queueMetrics) get(addedAt int64, startedAt *int64, now int64) {
	m.depth.Dec()
	m.latency.Observe(seconds(now - addedAt))
	*startedAt = now
}

// done records the end of processing.
func (m *queueMetrics) done(startedAt, now int64) {
	m.workDuration.Observe(seconds(now - startedAt))
}

// unfinishedWorkLoop refreshes the unfinished-work and longest-running
// gauges every unfinishedWorkPeriod until shutdown.
func (q *Typed[T]) unfinishedWorkLoop() {
	defer q.wg.Done()
	timer := q.clock.NewTimer(unfinishedWorkPeriod)
	defer timer.Stop()
	for {
		select {
		case <-q.stop:
			return
		case <-timer.C():
			q.updateUnfinishedWork()
			timer.Reset(unfinishedWorkPeriod)
		}
	}
}

// updateUnfinishedWork sums the ages of the items being processed. It
// reads the inflight list when that lists them all (the usual case), and
// otherwise scans the slab: O(slab) every unfinishedWorkPeriod, only when
// metrics are enabled.
func (q *Typed[T]) updateUnfinishedWork() {
	q.lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	now := q.now()
	var total, longest int64
	visit := func(idx int32) {
		age := now - q.cold.at(idx).startedAt
		total += age
		longest = max(longest, age)
	}
	if len(q.inflight) == q.processing {
		for _, idx := range q.inflight {
			visit(idx)
		}
	} else {
		for i := range q.slab.n {
			if q.slab.at(i).state&stProcessing != 0 {
				visit(i)
			}
		}
	}
	q.metrics.unfinishedWork.Set(seconds(total))
	q.metrics.longestRunningProcessor.Set(seconds(longest))
}
