package workqueue

import (
	"sync"
	"time"
)

// RateLimiter decides how long an item waits before its next retry. The
// method set is client-go's TypedRateLimiter[T], so limiters from either
// library work with either queue. Implementations must be safe for
// concurrent use and must not sleep.
type RateLimiter[T comparable] interface {
	// When records one more failure of item and returns its delay.
	When(item T) time.Duration
	// Forget clears item's failure history (on success or give-up).
	Forget(item T)
	// NumRequeues returns item's failures since the last Forget.
	NumRequeues(item T) int
}

// DefaultControllerRateLimiter is client-go's default controller limiter:
// the maximum of a per-item exponential backoff (5ms doubling up to 1000s)
// and an overall token bucket (10 qps, burst 100).
func DefaultControllerRateLimiter[T comparable]() RateLimiter[T] {
	return NewMaxOfRateLimiter(
		NewItemExponentialRateLimiter[T](5*time.Millisecond, 1000*time.Second),
		NewBucketRateLimiter[T](10, 100, nil),
	)
}

// failureCounter counts failures per item; it is the state shared by the
// per-item limiters.
type failureCounter[T comparable] struct {
	mu sync.Mutex
	// failures holds a positive count for every item that failed since its
	// last Forget; other items are absent.
	failures map[T]int
}

// inc counts one failure and returns the count before it.
func (c *failureCounter[T]) inc(item T) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failures == nil {
		c.failures = make(map[T]int)
	}
	n := c.failures[item]
	c.failures[item] = n + 1
	return n
}

// Forget clears item's failures.
func (c *failureCounter[T]) Forget(item T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.failures, item)
}

// NumRequeues returns item's failures since the last Forget.
func (c *failureCounter[T]) NumRequeues(item T) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failures[item]
}

// ItemExponentialRateLimiter waits base×2^failures, capped at maxDelay.
type ItemExponentialRateLimiter[T comparable] struct {
	failureCounter[T]
	base, maxDelay time.Duration // base ≥ 0
}

// NewItemExponentialRateLimiter returns a per-item exponential backoff. A
// negative base counts as zero; the result never exceeds maxDelay and never
// overflows.
func NewItemExponentialRateLimiter[T comparable](base, maxDelay time.Duration) *ItemExponentialRateLimiter[T] {
	return &ItemExponentialRateLimiter[T]{base: max(base, 0), maxDelay: maxDelay}
}

// When implements RateLimiter.
func (r *ItemExponentialRateLimiter[T]) When(item T) time.Duration {
	return backoff(r.base, r.maxDelay, r.inc(item))
}

// backoff returns min(base×2^exp, maxDelay) without overflowing.
func backoff(base, maxDelay time.Duration, exp int) time.Duration {
	d := base
	for ; exp > 0 && d > 0; exp-- {
		if d > maxDelay/2 {
			return maxDelay
		}
		d *= 2
	}
	return min(d, maxDelay)
}

// ItemFastSlowRateLimiter waits fast for the first maxFast failures of an
// item and slow afterwards.
type ItemFastSlowRateLimiter[T comparable] struct {
	failureCounter[T]
	fast, slow time.Duration
	maxFast    int
}

// NewItemFastSlowRateLimiter returns a fast-then-slow per-item limiter.
func NewItemFastSlowRateLimiter[T comparable](fast, slow time.Duration, maxFast int) *ItemFastSlowRateLimiter[T] {
	return &ItemFastSlowRateLimiter[T]{fast: fast, slow: slow, maxFast: maxFast}
}

// When implements RateLimiter.
func (r *ItemFastSlowRateLimiter[T]) When(item T) time.Duration {
	if r.inc(item) < r.maxFast {
		return r.fast
	}
	return r.slow
}

// MaxOfRateLimiter asks every limiter and waits the longest. NumRequeues is
// the largest count and Forget reaches all of them.
type MaxOfRateLimiter[T comparable] struct {
	limiters []RateLimiter[T]
}

// NewMaxOfRateLimiter combines limiters; with none, When returns zero.
func NewMaxOfRateLimiter[T comparable](limiters ...RateLimiter[T]) *MaxOfRateLimiter[T] {
	return &MaxOfRateLimiter[T]{limiters: limiters}
}

// When implements RateLimiter; every limiter sees the failure.
func (r *MaxOfRateLimiter[T]) When(item T) time.Duration {
	var d time.Duration
	for _, l := range r.limiters {
		d = max(d, l.When(item))
	}
	return d
}

// Forget implements RateLimiter.
func (r *MaxOfRateLimiter[T]) Forget(item T) {
	for _, l := range r.limiters {
		l.Forget(item)
	}
}

// NumRequeues implements RateLimiter.
func (r *MaxOfRateLimiter[T]) NumRequeues(item T) int {
	n := 0
	for _, l := range r.limiters {
		n = max(n, l.NumRequeues(item))
	}
	return n
}

// WithMaxWaitRateLimiter caps another limiter's delays at maxDelay.
type WithMaxWaitRateLimiter[T comparable] struct {
	RateLimiter[T]
	maxDelay time.Duration
}

// NewWithMaxWaitRateLimiter caps limiter's delays at maxDelay.
func NewWithMaxWaitRateLimiter[T comparable](limiter RateLimiter[T], maxDelay time.Duration) *WithMaxWaitRateLimiter[T] {
	return &WithMaxWaitRateLimiter[T]{RateLimiter: limiter, maxDelay: maxDelay}
}

// When implements RateLimiter.
func (r *WithMaxWaitRateLimiter[T]) When(item T) time.Duration {
	return min(r.RateLimiter.When(item), r.maxDelay)
}
