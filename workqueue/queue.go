package workqueue

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	cgworkqueue "k8s.io/client-go/util/workqueue"
)

// Typed is a work queue of comparable items: deduplicating, one worker per
// item at a time, first-in first-out among equal priorities, with delays,
// per-item rate limits, priorities with aging and optional metrics. It
// implements client-go's TypedInterface, TypedDelayingInterface and
// TypedRateLimitingInterface. Create it with New (or the drop-in
// constructors); the zero value is not usable.
type Typed[T comparable] struct {
	mu sync.Mutex
	// ready is signalled once per queued item and broadcast at shutdown;
	// Get waits on it.
	ready *sync.Cond
	// getters counts Gets waiting on ready (or about to): Signal is skipped
	// when zero, and Add applies the intake at once when not.
	getters atomic.Int32
	// in buffers plain Adds until the next holder of mu applies them.
	in intake[T]
	// spare is the intake's second buffer, owned by the holder of mu.
	spare []intakeRec[T]
	// idle is broadcast when processing drops to zero or drain is cancelled;
	// ShutDownWithDrain waits on it.
	idle *sync.Cond

	// index maps every item with a non-zero entry state to its slab index.
	index itemIndex[T]
	// slab holds the entries and cold their delay and metrics fields (same
	// indices); free lists the unused indices (state zero).
	slab slab[entry[T]]
	cold slab[coldEntry]
	free []int32

	// fifo holds queued priority-zero items in key order, plus stale slots
	// (see ringSlot); fifoLive counts the live ones.
	fifo     ring
	fifoLive int
	// prio holds queued items with a non-zero priority, by (key, seq).
	prio idxHeap[T]
	// delays holds a live node for every stWaiting entry, plus stale ones.
	delays delayHeap

	// queued == fifoLive + prio.len(): the items Get can hand out now. With
	// a custom Queue it counts the entries pushed there and not yet popped.
	queued int
	// custom, when set, stores and orders the ready items instead of the
	// ring and the heap (client-go's Queue config field; see custom.go).
	custom cgworkqueue.Queue[T]
	// processing counts entries with stProcessing.
	processing int
	// inflight lists up to maxInflight entries, each with stProcessing and
	// at most once, so that Done usually finds its item by comparison
	// instead of hashing.
	inflight []int32
	// seq is the last enqueue sequence number handed out.
	seq uint64
	// timed turns on at the first non-zero priority: from then on every
	// enqueue reads the clock so that aging keys are comparable.
	timed bool

	shuttingDown bool
	// drain is true while a ShutDownWithDrain call is waiting.
	drain bool

	clock Clock
	// epoch is the clock reading at construction; times are int64 ns since it.
	epoch    time.Time
	aging    int64
	limiter  RateLimiter[T]
	metrics  *queueMetrics // nil when metrics are disabled
	logger   klog.Logger
	name     string
	onMisuse func(MisuseKind)

	// delayLoopStarted is set when the delay goroutine has been started.
	delayLoopStarted bool
	// wake (capacity 1) tells the delay goroutine that the earliest due time changed.
	wake chan struct{}
	// stop is closed by the first shutdown call; background goroutines exit.
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
	// stopCtxWatch unregisters the context.AfterFunc set up by New.
	stopCtxWatch func() bool
}

// New returns an empty queue. Logging uses klog.FromContext(ctx); cancelling
// ctx shuts the queue down as ShutDown does. A nil ctx counts as
// context.Background().
func New[T comparable](ctx context.Context, opts Options[T]) *Typed[T] {
	if ctx == nil {
		ctx = context.Background()
	}
	opts.withDefaults()
	q := &Typed[T]{
		index:    newItemIndex[T](),
		fifo:     newReadyRing(),
		clock:    opts.Clock,
		epoch:    opts.Clock.Now(),
		aging:    int64(opts.AgingInterval),
		limiter:  opts.RateLimiter,
		logger:   klog.FromContext(ctx),
		name:     opts.Name,
		onMisuse: opts.OnMisuse,
		custom:   opts.Storage,
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
	}
	q.ready = sync.NewCond(&q.mu)
	q.idle = sync.NewCond(&q.mu)
	q.prio = idxHeap[T]{entries: &q.slab}
	if opts.Name != "" && opts.MetricsProvider != nil {
		q.metrics = newQueueMetrics(opts.MetricsProvider, opts.Name)
		q.wg.Add(1)
		go q.unfinishedWorkLoop()
	}
	if ctx.Done() != nil {
		q.stopCtxWatch = context.AfterFunc(ctx, q.ShutDown)
	}
	return q
}

// now returns the clock reading in ns since q.epoch.
func (q *Typed[T]) now() int64 { return int64(q.clock.Now().Sub(q.epoch)) }

// Len returns the number of items Get could hand out now: not those being
// processed, not those delayed. Informational only.
func (q *Typed[T]) Len() int {
	q.lock()
	defer q.mu.Unlock()
	return q.readyLen()
}

// Get blocks until an item is ready and hands it out; the caller must call
// Done with it. After shutdown, Get keeps handing out queued items and
// returns shutdown == true once none is left.
func (q *Typed[T]) Get() (item T, shutdown bool) {
	q.lock()
	var idx int32
	for {
		for q.readyLen() == 0 && !q.shuttingDown {
			q.getters.Add(1)
			if q.in.n.Load() == 0 {
				q.ready.Wait()
			}
			q.getters.Add(-1)
			q.applyIntakeLocked()
		}
		if q.readyLen() == 0 {
			q.mu.Unlock()
			return item, true
		}
		if q.custom == nil {
			idx = q.popReady()
			break
		}
		var ok bool
		if idx, ok = q.popCustom(); ok {
			break
		}
	}
	e := q.slab.at(idx)
	e.state = e.state&^stQueued | stProcessing
	q.processing++
	if len(q.inflight) < maxInflight {
		q.inflight = append(q.inflight, idx)
	}
	if q.metrics != nil {
		c := q.cold.at(idx)
		q.metrics.get(c.addedAt, &c.startedAt, q.now())
	}
	item = e.item
	q.mu.Unlock()
	return item, false
}

// Done marks item as processed. If it was added again meanwhile it is queued
// again now. Done for an item that is not being processed changes nothing
// and is reported as MisuseDoneNotProcessing.
func (q *Typed[T]) Done(item T) {
	q.lock()
	idx, ok := q.takeInflight(item)
	if !ok {
		// Not among the recent hand-outs: hash and look it up.
		q.mu.Unlock()
		tag := q.index.hash(item)
		q.lock()
		idx, ok = q.lookup(item, tag)
		if ok && q.slab.at(idx).state&stProcessing == 0 {
			ok = false
		}
		if ok {
			q.unlistInflight(idx) // Get may have listed it meanwhile
		}
	}
	if !ok {
		q.mu.Unlock()
		q.reportMisuse(MisuseDoneNotProcessing, item)
		return
	}
	e := q.slab.at(idx)
	if q.metrics != nil {
		q.metrics.done(q.cold.at(idx).startedAt, q.now())
	}
	e.state &^= stProcessing
	q.processing--
	if e.state&stDirty != 0 {
		e.state &^= stDirty
		q.enqueueLocked(idx, e.priority)
	} else {
		q.release(idx)
	}
	if q.processing == 0 && q.drain {
		q.idle.Broadcast()
	}
	q.mu.Unlock()
}

// ShuttingDown reports whether ShutDown or ShutDownWithDrain was called.
func (q *Typed[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}
