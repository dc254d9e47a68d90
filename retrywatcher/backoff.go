package retrywatcher

import "time"

// Backoff is the retry policy between watch attempts that made no progress.
// The n-th consecutive failure waits min(Initial·Factor^(n-1), Cap), scaled by
// a random factor in [1, 1+Jitter). Any delivered event or bookmark resets it.
type Backoff struct {
	// Initial is the first delay. Zero means 500ms.
	Initial time.Duration
	// Factor multiplies the delay after each failure. Values below 1 mean 2.
	Factor float64
	// Cap bounds the delay before jitter. Zero means 30s.
	Cap time.Duration
	// Jitter adds up to this fraction of the delay at random. Negative means 0.
	Jitter float64
}

func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = 500 * time.Millisecond
	}
	if b.Factor < 1 {
		b.Factor = 2
	}
	if b.Cap <= 0 {
		b.Cap = 30 * time.Second
	}
	if b.Jitter < 0 {
		b.Jitter = 0
	}
	return b
}

// delay returns the wait before attempt number failures (1-based), given a
// random number r in [0,1).
func (b Backoff) delay(failures int, r float64) time.Duration {
	d := float64(b.Initial)
	for i := 1; i < failures && d < float64(b.Cap); i++ {
		d *= b.Factor
	}
	d = min(d, float64(b.Cap))
	return time.Duration(d * (1 + b.Jitter*r))
}
