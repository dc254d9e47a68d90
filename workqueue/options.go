package workqueue

import (
	"time"

	"k8s.io/utils/clock"

	cgworkqueue "k8s.io/client-go/util/workqueue"
)

// Clock is the narrowest clock the queue needs: the current time, and a timer
// for the next due delayed item and the metrics refresh. clock.RealClock and
// k8s.io/utils/clock/testing.FakeClock both satisfy it.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) clock.Timer
}

// DefaultAgingInterval is the waiting time worth one priority level when
// Options.AgingInterval is zero.
const DefaultAgingInterval = time.Second

// maxPriority bounds |Priority| so that priority×AgingInterval cannot overflow
// for any sane interval; larger values are clamped.
const maxPriority = 1 << 20

// unfinishedWorkPeriod is how often the unfinished-work and longest-running
// gauges are refreshed when metrics are enabled (client-go uses the same).
const unfinishedWorkPeriod = 500 * time.Millisecond

// Options configures New. The zero value is a valid configuration: an
// unnamed, metric-less queue on the real clock with the default controller
// rate limiter.
type Options[T comparable] struct {
	// Name labels the metrics. Metrics are recorded only when both Name and
	// MetricsProvider are set.
	Name string

	// MetricsProvider creates the queue's metrics. Nil disables metrics, and
	// then the hot paths read no clock and allocate nothing for metrics.
	MetricsProvider MetricsProvider

	// Clock is injected for tests; nil means clock.RealClock{}.
	Clock Clock

	// RateLimiter decides AddRateLimited delays; nil means
	// DefaultControllerRateLimiter.
	RateLimiter RateLimiter[T]

	// AgingInterval is the waiting time that is worth one priority level (see
	// the package documentation, "Priorities"). Zero or negative means
	// DefaultAgingInterval.
	AgingInterval time.Duration

	// OnMisuse, when set, is called (outside the queue's lock) every time a
	// call is rejected or ignored: see MisuseKind. It must not block.
	OnMisuse func(kind MisuseKind)

	// Storage, when set, stores and orders the ready items instead of the
	// queue's own ring and heap: client-go's Queue interface, which
	// client-go's TypedQueueConfig.Queue takes (see "Custom storage" in the
	// package documentation). AddOptions.Priority then has no effect.
	Storage cgworkqueue.Queue[T]
}

// AddOptions qualifies one AddWithOptions call.
type AddOptions struct {
	// Priority orders ready items: higher first, and equal priorities in
	// first-in first-out order. Waiting ages an item by one level per
	// AgingInterval, so low priorities cannot starve. Values beyond ±2^20 are
	// clamped. Re-adding a waiting item keeps the higher of its priorities.
	Priority int

	// After delays the add. Zero or negative means now. Re-adding an item
	// that is already delayed keeps the earlier due time.
	After time.Duration
}

// withDefaults fills in the zero fields.
func (o *Options[T]) withDefaults() {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.RateLimiter == nil {
		o.RateLimiter = DefaultControllerRateLimiter[T]()
	}
	if o.AgingInterval <= 0 {
		o.AgingInterval = DefaultAgingInterval
	}
}
