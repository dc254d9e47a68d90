package reflector

import "time"

// bucket is a token bucket on the caller's clock: it holds at most burst
// tokens and earns one every every; it starts full. It is pure (the time is
// passed in) and paces the requests the machine makes without a failure to
// back off from: relists its owner asks for, and re-watches after a watch
// the server closed early.
type bucket struct {
	burst float64
	every time.Duration
	// tokens is the content as of filled; filled is zero before the first
	// take.
	tokens float64
	filled time.Time
}

// take takes a token at now and returns 0 or, when none is left, how long
// until there is one (and takes nothing).
func (b *bucket) take(now time.Time) time.Duration {
	if b.filled.IsZero() {
		b.tokens = b.burst
	} else {
		b.tokens = min(b.burst, b.tokens+float64(now.Sub(b.filled))/float64(b.every))
	}
	b.filled = now
	if b.tokens < 1 {
		return time.Duration((1 - b.tokens) * float64(b.every))
	}
	b.tokens--
	return 0
}
