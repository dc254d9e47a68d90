package promprovider

import (
	"math"
	"sync/atomic"
	"time"
)

// latencyBuckets are client-go's for informer_processing_latency_seconds
// (component-base's clientgo/fifo), so dashboards carry over.
var latencyBuckets = [...]float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// latency is a histogram of processing times with atomic counts only: no
// lock and no allocation per observation.
type latency struct {
	// counts[i] counts observations in (latencyBuckets[i-1],
	// latencyBuckets[i]]; the last element those above every bound.
	counts [len(latencyBuckets) + 1]atomic.Uint64
	// sumBits is the float64 sum of the observations, in seconds.
	sumBits atomic.Uint64
}

func (l *latency) observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(latencyBuckets) && s > latencyBuckets[i] {
		i++
	}
	l.counts[i].Add(1)
	for {
		old := l.sumBits.Load()
		if l.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+s)) {
			return
		}
	}
}

// snapshot returns the count, the sum and the cumulative bucket counts, as
// prometheus.MustNewConstHistogram takes them.
func (l *latency) snapshot() (count uint64, sum float64, buckets map[float64]uint64) {
	buckets = make(map[float64]uint64, len(latencyBuckets))
	for i, b := range latencyBuckets {
		count += l.counts[i].Load()
		buckets[b] = count
	}
	count += l.counts[len(latencyBuckets)].Load()
	return count, math.Float64frombits(l.sumBits.Load()), buckets
}
