package reflector

import (
	"math/rand/v2"
	"time"
)

// Backoff is the retry-delay policy of both engines that talk to the API
// server: the reflector (Config.Backoff) and the RetryWatcher
// (retrywatcher.Options.Backoff). It is pure: the failure count, the
// time and the random source are passed in, and it never sleeps.
//
// The n-th failure of a run waits min(Initial·Factor^(n-1), Max) (Delay),
// plus a random fraction in [0, Jitter) of that. A run starts again from
// Initial when a failure comes ResetAfter or more after the previous one
// (Next), or when its owner says so (the RetryWatcher: on any delivered
// event).
//
// Zero fields take the owner's defaults, which differ on purpose:
//
//	             reflector   RetryWatcher
//	Initial      800ms       500ms
//	Max          30s         30s
//	Factor       2           2
//	Jitter       1.0         none
//	ResetAfter   2m          never
//	Slow         Max         (not used)
//
// The clientgo/ drop-ins set Slow negative: client-go's reflector retries
// 401, 403 and 404 on the same schedule as any failure.
//
// The reflector's are client-go's reflector defaults: an informer is one of
// many (every controller, every replica) that fail together when an API
// server restarts, so full jitter spreads their relists, and a quiet 2m
// ends a run because nothing else tells an informer that it recovered. A
// RetryWatcher is one consumer's stream: it knows exactly when it made
// progress (a delivered event ends the run, so it needs no ResetAfter),
// retries a little sooner, and, without jitter, keeps the documented pace
// (7 watch calls in the first minute of an outage, then 2 a minute). It
// ends on 401 and 403 instead of retrying them slowly, so Slow is the
// reflector's alone.
type Backoff struct {
	// Initial is the first delay of a run.
	Initial time.Duration
	// Max caps the delay before jitter. The reflector raises it to Initial
	// if it is lower; the RetryWatcher then waits Max.
	Max time.Duration
	// Factor multiplies the delay after each failure; values below 1 take
	// the default (the reflector rejects a Factor in (0, 1)).
	Factor float64
	// Jitter adds a random fraction in [0, Jitter) of the delay; a
	// negative value disables jitter.
	Jitter float64
	// ResetAfter: a failure that comes this long after the previous one
	// starts a new run. Zero or negative takes the default; the
	// RetryWatcher's, zero, means never.
	ResetAfter time.Duration
	// Slow is the minimum delay after 401, 403 and 404, which do not clear
	// by themselves quickly (reflector only). Zero takes the default (Max);
	// negative means none: those failures back off as any other, as in
	// client-go's reflector (the clientgo/ drop-ins' setting).
	Slow time.Duration
}

// WithDefaults returns b with the fields it leaves unset taken from def:
// Initial, Max and ResetAfter when zero or negative, Factor when below 1,
// Jitter and Slow when zero (a negative Jitter becomes 0: none; a negative
// Slow stays, for the reflector's defaults to read as none).
func (b Backoff) WithDefaults(def Backoff) Backoff {
	if b.Initial <= 0 {
		b.Initial = def.Initial
	}
	if b.Max <= 0 {
		b.Max = def.Max
	}
	if b.Factor < 1 {
		b.Factor = def.Factor
	}
	if b.Jitter == 0 {
		b.Jitter = def.Jitter
	}
	if b.Jitter < 0 {
		b.Jitter = 0
	}
	if b.ResetAfter <= 0 {
		b.ResetAfter = def.ResetAfter
	}
	if b.Slow == 0 {
		b.Slow = def.Slow
	}
	return b
}

// Next returns the number, in its run, of a failure at now, given the
// previous failure's number n (0 for none) and time last: n+1, or 1 when
// ResetAfter is set and the previous failure is at least that old.
func (b Backoff) Next(n int, last, now time.Time) int {
	if n > 0 && b.ResetAfter > 0 && now.Sub(last) >= b.ResetAfter {
		return 1
	}
	return n + 1
}

// Delay returns the wait before retrying after the n-th failure of a run
// (n >= 1): min(Initial·Factor^(n-1), Max), multiplied out a step at a
// time in whole nanoseconds, plus a random fraction in [0, Jitter) of it
// drawn from r. With a nil r, or no Jitter, it is the schedule's floor
// and draws nothing.
func (b Backoff) Delay(n int, r *rand.Rand) time.Duration {
	d := min(b.Initial, b.Max)
	for i := 1; i < n && d < b.Max; i++ {
		next := min(time.Duration(float64(d)*b.Factor), b.Max)
		if next == d {
			break
		}
		d = next
	}
	if b.Jitter > 0 && r != nil {
		d += time.Duration(r.Float64() * b.Jitter * float64(d))
	}
	return d
}

// defaultBackoff is the reflector's (client-go's); see Backoff.
var defaultBackoff = Backoff{
	Initial:    800 * time.Millisecond,
	Max:        30 * time.Second,
	Factor:     2,
	Jitter:     1,
	ResetAfter: 2 * time.Minute,
}

// withDefaults applies the reflector's defaults: defaultBackoff, Max at
// least Initial, and Slow defaulting to Max (negative: none, 0).
func (b Backoff) withDefaults() Backoff {
	b = b.WithDefaults(defaultBackoff)
	if b.Max < b.Initial {
		b.Max = b.Initial
	}
	switch {
	case b.Slow == 0:
		b.Slow = b.Max
	case b.Slow < 0:
		b.Slow = 0
	}
	return b
}

// backoff is a reflector's run of failures under its Backoff.
type backoff struct {
	cfg Backoff // defaults applied
	// n is the number of the previous failure in the current run, 0
	// before the first; last is its time.
	n    int
	last time.Time
}

// delay records a failure at now and returns how long to wait.
func (b *backoff) delay(now time.Time, r *rand.Rand) time.Duration {
	b.n = b.cfg.Next(b.n, b.last, now)
	b.last = now
	return b.cfg.Delay(b.n, r)
}
