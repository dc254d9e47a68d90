package reflector

import (
	"math/rand/v2"
	"time"
)

// BackoffConfig configures the retry delays. Zero fields take the defaults,
// which are client-go's: 800ms doubling to 30s, jitter 1.0 (so a delay d
// becomes a random value in [d, 2d)), reset after 2m without a failure.
type BackoffConfig struct {
	// Initial is the first delay. Default 800ms.
	Initial time.Duration
	// Max caps the delay before jitter. Default 30s.
	Max time.Duration
	// Factor multiplies the delay after each failure. Default 2; must be >= 1.
	Factor float64
	// Jitter adds a random fraction in [0, Jitter) of the delay. Default 1.0;
	// a negative value disables jitter.
	Jitter float64
	// ResetAfter: a failure that comes this long after the previous one
	// starts again from Initial. Default 2m.
	ResetAfter time.Duration
	// Slow is the minimum delay after 401, 403 and 404, which do not clear
	// by themselves quickly. Default: Max.
	Slow time.Duration
}

func (c BackoffConfig) withDefaults() BackoffConfig {
	if c.Initial <= 0 {
		c.Initial = 800 * time.Millisecond
	}
	if c.Max <= 0 {
		c.Max = 30 * time.Second
	}
	if c.Max < c.Initial {
		c.Max = c.Initial
	}
	if c.Factor == 0 {
		c.Factor = 2
	}
	if c.Jitter == 0 {
		c.Jitter = 1
	}
	if c.Jitter < 0 {
		c.Jitter = 0
	}
	if c.ResetAfter <= 0 {
		c.ResetAfter = 2 * time.Minute
	}
	if c.Slow <= 0 {
		c.Slow = c.Max
	}
	return c
}

// backoff is a pure exponential backoff policy: time and randomness are
// passed in, it never sleeps.
type backoff struct {
	cfg BackoffConfig // defaults applied
	// next is the un-jittered delay of the next failure; 0 means Initial.
	next time.Duration
	// last is the time of the previous failure; zero before the first.
	last time.Time
}

// delay records a failure at now and returns how long to wait.
func (b *backoff) delay(now time.Time, r *rand.Rand) time.Duration {
	if !b.last.IsZero() && now.Sub(b.last) >= b.cfg.ResetAfter {
		b.next = 0
	}
	if b.next == 0 {
		b.next = b.cfg.Initial
	}
	d := b.next
	b.next = min(time.Duration(float64(b.next)*b.cfg.Factor), b.cfg.Max)
	b.last = now
	if b.cfg.Jitter > 0 {
		d += time.Duration(r.Float64() * b.cfg.Jitter * float64(d))
	}
	return d
}
