package workqueue

import (
	"time"

	"golang.org/x/time/rate"
	"k8s.io/utils/clock"
)

// BucketRateLimiter is an overall token bucket shared by all items: qps
// tokens per second, at most burst saved. It does not track items, so
// NumRequeues is always zero and Forget does nothing.
type BucketRateLimiter[T comparable] struct {
	// limiter is nil when the bucket is disabled (qps ≤ 0).
	limiter *rate.Limiter
	clock   clock.PassiveClock
}

// NewBucketRateLimiter returns a token bucket. qps ≤ 0 disables it (When
// returns zero); burst < 1 counts as 1. A nil clock means the real clock.
func NewBucketRateLimiter[T comparable](qps float64, burst int, c clock.PassiveClock) *BucketRateLimiter[T] {
	if c == nil {
		c = clock.RealClock{}
	}
	r := &BucketRateLimiter[T]{clock: c}
	if qps > 0 {
		r.limiter = rate.NewLimiter(rate.Limit(qps), max(burst, 1))
	}
	return r
}

// When implements RateLimiter: it reserves one token and returns the wait.
func (r *BucketRateLimiter[T]) When(T) time.Duration {
	if r.limiter == nil {
		return 0
	}
	now := r.clock.Now()
	return r.limiter.ReserveN(now, 1).DelayFrom(now)
}

// Forget implements RateLimiter; the bucket keeps no per-item state.
func (r *BucketRateLimiter[T]) Forget(T) {}

// NumRequeues implements RateLimiter; always zero.
func (r *BucketRateLimiter[T]) NumRequeues(T) int { return 0 }
