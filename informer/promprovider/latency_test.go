package promprovider

import (
	"testing"
	"time"
)

func TestLatencyBuckets(t *testing.T) {
	var l latency
	for _, d := range []time.Duration{0, time.Millisecond, 3 * time.Millisecond, 2 * time.Second, time.Minute} {
		l.observe(d)
	}
	n, sum, buckets := l.snapshot()
	if n != 5 {
		t.Fatalf("count %d, want 5", n)
	}
	if want := 0 + 0.001 + 0.003 + 2 + 60; sum < want-1e-9 || sum > want+1e-9 {
		t.Fatalf("sum %v, want %v", sum, want)
	}
	// Cumulative: 0 and 1ms are in the 1ms bucket (upper bounds are
	// inclusive), 3ms in 5ms, 2s in 2.5s, a minute in none.
	for b, want := range map[float64]uint64{0.001: 2, 0.005: 3, 1: 3, 2.5: 4, 10: 4} {
		if buckets[b] != want {
			t.Errorf("bucket %v: %d, want %d", b, buckets[b], want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { l.observe(time.Millisecond) }); n != 0 {
		t.Fatalf("observe allocates %v times", n)
	}
}
