package workqueue

// AddRateLimited adds item after the delay its rate limiter returns (one
// more failure is recorded). It counts in the retries metric.
func (q *Typed[T]) AddRateLimited(item T) {
	_ = q.addWith(item, 0, q.limiter.When(item), true)
}

// Forget clears item's failure history in the rate limiter. It does not
// replace Done.
func (q *Typed[T]) Forget(item T) { q.limiter.Forget(item) }

// NumRequeues returns item's failures since its last Forget.
func (q *Typed[T]) NumRequeues(item T) int { return q.limiter.NumRequeues(item) }
