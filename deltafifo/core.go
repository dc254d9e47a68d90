package deltafifo

import (
	"context"
	"sync"

	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/internal/ring"

	"github.com/listwatch/listwatch/internal/nilcheck"
)

// knownSource is the core's view of the consumer's store. Unlike the public
// KnownObjects it can fail, because client-go's KeyListerGetter can.
type knownSource[T any] interface {
	ListKeys() []string
	GetByKey(key string) (T, bool, error)
}

// config is everything the core needs; the typed FIFO and the client-go
// drop-in each build one. It never changes after construction.
type config[T any] struct {
	name   string
	logger klog.Logger
	// keyOf computes the key of a non-nil object.
	keyOf func(T) (string, error)
	// transform is applied to incoming objects; may be nil.
	transform func(T) (T, error)
	// known is the consumer's store; may be nil.
	known knownSource[T]
	// unwrap recognises an incoming "final state unknown" wrapper (the
	// drop-in's cache.DeletedFinalStateUnknown) and returns its key and the
	// wrapped object; may be nil.
	unwrap func(T) (key string, inner T, ok bool)
	// rejectEmptyKey makes an empty key an invalid object (client-go
	// accepts it, so the drop-in does too).
	rejectEmptyKey bool
	// invalid builds the error returned for an object with no key.
	invalid func(obj T, err error) error
	// transformFailed builds the error returned for a failed transform.
	transformFailed func(err error) error
	// closedErr is what Pop returns once the FIFO is closed and drained.
	closedErr error
	// rejectClosed makes writes after Close fail with closedErr.
	rejectClosed bool
	// replaceType is the delta type Replace queues in coalescing mode.
	replaceType DeltaType
	// inOrder chooses the queue: ordered rather than the coalescer.
	inOrder  bool
	maxBatch int
	metrics  Metrics
	// listMarks and wholeLists are Options.ListMarks and WholeLists;
	// known is nil when listMarks is set.
	listMarks  bool
	wholeLists bool
	// positions is Options.MarkPositions (with listMarks only).
	positions bool
	// rvOf reads an object's resource version (list marks: ListProgress).
	rvOf func(T) string
}

// core is the FIFO engine shared by the typed API and the drop-in; q is
// the queue of its mode (see queue).
type core[T any] struct {
	cfg config[T]

	// mu guards every field below.
	mu sync.Mutex
	// cond (with L = &mu) is broadcast whenever something is queued, on
	// Close, and when a waiting Pop's context ends.
	cond sync.Cond
	// closed is set once by Close and never cleared.
	closed bool
	// populated is set by the first Add/Update/Delete/Replace.
	populated bool
	// initialCount is the number of queued keys (events, in order mode) of
	// the first Replace not yet processed; zero once synced. With list
	// marks it is 1 from the initial list's begin until its ListEnd has
	// been processed.
	initialCount int
	// synced is closed, exactly once, when populated && initialCount == 0;
	// syncedClosed records that it was.
	synced       chan struct{}
	syncedClosed bool

	// q holds what is queued, in the mode chosen at construction.
	q queue[T]
	// batch is PopBatch's reusable item list; empty between calls.
	batch []Item[T]
	// inflight is the number of keys (events) handed to a PopBatch process
	// function that is running without the lock; see popBatch. idle (with
	// L = &mu) is broadcast when it drops back to zero.
	inflight int
	idle     sync.Cond
	// paging is the list being queued a page at a time, if any.
	paging paging[T]
	// beginPending (list marks without positions) says that a list has
	// begun since the last batch was taken: the next batch opens with a
	// ListBegin item.
	beginPending bool
	// ends (list marks) holds the resource versions of the ListEnd
	// sentinels in the queue, oldest first, one per sentinel.
	ends ring.Ring[listEnd]
	// drainWaiters counts waitLen calls waiting for the queue to shrink.
	drainWaiters int
	// progress (list marks) is the resource version of the last write,
	// list end or Progress call queued with one, not yet told in a
	// ListProgress item when pending (see ListProgress).
	progress struct {
		rv      string
		pending bool
	}
}

func newCore[T any](cfg config[T]) *core[T] {
	if cfg.maxBatch <= 0 {
		cfg.maxBatch = defaultMaxBatch
	}
	q := newQueue[T](cfg.inOrder)
	cfg.replaceType = q.listType(cfg.replaceType)
	c := &core[T]{cfg: cfg, synced: make(chan struct{}), q: q}
	c.cond.L = &c.mu
	c.idle.L = &c.mu
	return c
}

// prepare validates obj and transforms it, before any lock is taken. It
// returns the key and a delta of type typ. Transform is skipped for
// wrapped "final state unknown" objects and when transform is false.
func (c *core[T]) prepare(typ DeltaType, obj T, transform bool) (string, Delta[T], error) {
	d := Delta[T]{Object: obj, Type: typ}
	if nilcheck.Is(obj) {
		return "", d, c.reject(obj, ErrNilObject)
	}
	if c.cfg.unwrap != nil {
		if key, inner, ok := c.cfg.unwrap(obj); ok {
			d.Object, d.FinalStateUnknown = inner, true
			return key, d, nil
		}
	}
	key, err := c.cfg.keyOf(obj)
	if err == nil && key == "" && c.cfg.rejectEmptyKey {
		err = ErrEmptyKey
	}
	if err != nil {
		return "", d, c.reject(obj, err)
	}
	if transform && c.cfg.transform != nil {
		if d.Object, err = c.cfg.transform(obj); err != nil {
			c.countRejected()
			return "", d, c.cfg.transformFailed(err)
		}
	}
	return key, d, nil
}

// prepareList runs prepare over a Replace list. On any error it returns
// that error and nothing else, so Replace can stay all-or-nothing.
func (c *core[T]) prepareList(typ DeltaType, list []T) ([]string, []Delta[T], error) {
	keys := make([]string, len(list))
	deltas := make([]Delta[T], len(list))
	for i, obj := range list {
		key, d, err := c.prepare(typ, obj, true)
		if err != nil {
			return nil, nil, err
		}
		keys[i], deltas[i] = key, d
	}
	return keys, deltas, nil
}

func (c *core[T]) reject(obj T, err error) error {
	c.countRejected()
	return c.cfg.invalid(obj, err)
}

func (c *core[T]) countRejected() {
	if c.cfg.metrics != nil {
		c.mu.Lock()
		c.cfg.metrics.Rejected()
		c.mu.Unlock()
	}
}

// depthLocked is the number of queued keys or events, counting ListEnd
// sentinels.
func (c *core[T]) depthLocked() int {
	return c.q.len()
}

// changedLocked wakes waiting Pops and reports the new depth.
func (c *core[T]) changedLocked() {
	c.cond.Broadcast()
	if c.cfg.metrics != nil {
		c.cfg.metrics.Depth(c.depthLocked())
	}
}

func (c *core[T]) markPopulatedLocked() {
	if !c.populated {
		c.populated = true
		c.checkSyncedLocked()
	}
}

func (c *core[T]) checkSyncedLocked() {
	if c.populated && c.initialCount == 0 && !c.syncedClosed {
		c.syncedClosed = true
		close(c.synced)
	}
}

// processedLocked accounts for n popped keys (events) after processing;
// ended says a ListEnd was among them.
func (c *core[T]) processedLocked(n int, ended bool) {
	if c.cfg.listMarks {
		if ended && c.initialCount > 0 {
			c.initialCount = 0
			c.checkSyncedLocked()
		}
	} else if c.initialCount > 0 {
		c.initialCount = max(0, c.initialCount-n)
		c.checkSyncedLocked()
	}
	if c.drainWaiters > 0 {
		c.cond.Broadcast()
	}
}

func (c *core[T]) hasSynced() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.syncedClosed
}

func (c *core[T]) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.cond.Broadcast()
}

func (c *core[T]) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// len counts the keys (events) queued and those being processed by a
// PopBatch: zero means everything written so far has been processed.
func (c *core[T]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.depthLocked() + c.inflight
}

// waitIdleLocked waits until no PopBatch process function is running
// without the lock, so that the caller sees the consumer's store
// consistent with the queue.
func (c *core[T]) waitIdleLocked() {
	for c.inflight > 0 {
		c.idle.Wait()
	}
}

// wake is run by context.AfterFunc when a waiting Pop's context ends.
func (c *core[T]) wake() {
	c.mu.Lock()
	c.cond.Broadcast()
	c.mu.Unlock()
}

// waitLocked blocks on cond until something is queued, the FIFO is closed
// and drained, or ctx ends. It blocks on a sync.Cond, so testing/synctest
// sees a waiting Pop as durably blocked.
func (c *core[T]) waitLocked(ctx context.Context) error {
	if c.depthLocked() > 0 || c.progress.pending {
		return nil
	}
	return c.waitSlowLocked(ctx)
}

// progressedLocked records rv, the resource version of something just
// queued, for the next ListProgress (list marks). An empty one says
// nothing.
func (c *core[T]) progressedLocked(rv string) {
	if rv != "" && c.cfg.listMarks {
		c.progress.rv, c.progress.pending = rv, true
	}
}

// takeProgressLocked appends the pending ListProgress to the batch if the
// batch empties the queue.
func (c *core[T]) takeProgressLocked() {
	if c.progress.pending && c.depthLocked() == 0 {
		c.batch = append(c.batch, Item[T]{List: ListProgress, ResourceVersion: c.progress.rv})
		c.progress.pending = false
	}
}

func (c *core[T]) waitSlowLocked(ctx context.Context) error {
	var stop func() bool
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	for c.depthLocked() == 0 && !c.progress.pending {
		if c.closed {
			return c.cfg.closedErr
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if stop == nil && ctx.Done() != nil {
			stop = context.AfterFunc(ctx, c.wake)
		}
		c.cond.Wait()
	}
	return nil
}
