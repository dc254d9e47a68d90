package ondemand

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/internal/nilcheck"
	"github.com/listwatch/listwatch/internal/objname"
	"github.com/listwatch/listwatch/store"
)

// ErrBehind is returned (wrapped) by a read when the server answered, on
// every try, with an object older than the metadata the cache holds for
// it: the cache never hands out a whole object older than its metadata.
var ErrBehind = errors.New("ondemand: the server answered an object older than the cached metadata")

// Cache holds every object's metadata (its Metadata informer) and whole
// objects only for those read. See the package documentation.
type Cache[T store.Object] struct {
	opts  Options[T]
	meta  Metadata
	held  *held[T]
	clock clock.WithTicker
	log   logr.Logger
	// stop removes the Cache's handler from the metadata cache.
	stop func()

	// mu guards inflight.
	mu sync.Mutex
	// inflight has one call per key being fetched; later reads of the
	// key wait for it rather than fetch again.
	inflight map[string]*call[T]
	// refresh (capacity 1) wakes Run's worker; toRefresh, under mu, are
	// the keys it fetches: pinned objects that changed or started to
	// match Options.Hold.
	refresh   chan struct{}
	toRefresh map[string]struct{}

	counts counts
}

// call is one fetch that concurrent reads of a key share.
type call[T any] struct {
	done chan struct{}
	obj  T
	err  error
}

// counts are the Cache's counters, read by Stats.
type counts struct {
	reads, hits, fetches, fetchErrors, promotions, stale, lists atomic.Int64
	demotions                                                   [4]atomic.Int64 // by demoteIndex
}

var demoteReasons = [...]DemoteReason{DemotedIdle, DemotedBudget, DemotedChanged, DemotedDeleted}

func demoteIndex(r DemoteReason) int {
	for i, x := range demoteReasons {
		if x == r {
			return i
		}
	}
	return 0
}

// New builds a Cache over opts.Metadata and registers its handler there.
// ctx carries the logger. Call Run for idle demotion and Options.Hold.
func New[T store.Object](ctx context.Context, opts Options[T]) (*Cache[T], error) {
	if opts.Metadata == nil {
		return nil, errors.New("ondemand: Options.Metadata is required")
	}
	if opts.Fetcher == nil {
		return nil, errors.New("ondemand: Options.Fetcher is required")
	}
	if opts.Name == "" {
		opts.Name = opts.Resource.String()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Retries <= 0 {
		opts.Retries = 2
	}
	c := &Cache[T]{opts: opts, meta: opts.Metadata, held: newHeld[T](), clock: opts.Clock,
		log: klog.FromContext(ctx).WithValues("ondemand", opts.Name), inflight: map[string]*call[T]{},
		refresh: make(chan struct{}, 1), toRefresh: map[string]struct{}{}}
	stop, err := opts.Metadata.Notify(c.changed, c.deleted)
	if err != nil {
		return nil, fmt.Errorf("ondemand %s: %w", opts.Name, err)
	}
	c.stop = stop
	return c, nil
}

// Metadata is the metadata cache: every object, as metadata.
func (c *Cache[T]) Metadata() Metadata { return c.meta }

// Get returns the whole object namespace/name (namespace "" for a
// cluster-scoped one): the held one if it is at least as new as the cached
// metadata, else one fetched from the server, which is then held (within
// the Budget). An object the metadata cache does not hold is NotFound, as
// in any cache, without a request. A fetch's error is returned as the
// server gave it (a 404 for an object deleted meanwhile, 403, 429, 5xx, a
// timeout of ctx), and nothing is held for it. The object is shared: do
// not modify it.
func (c *Cache[T]) Get(ctx context.Context, namespace, name string) (T, error) {
	var zero T
	key := keyFor(namespace, name)
	c.counts.reads.Add(1)
	for try := 0; ; try++ {
		m, ok := c.meta.Get(key)
		if !ok {
			return zero, apierrors.NewNotFound(c.opts.Resource, name)
		}
		if obj, ok := c.held.get(key, m.GetResourceVersion(), c.now()); ok {
			if try == 0 {
				c.counts.hits.Add(1)
			}
			return obj, nil
		}
		obj, err := c.fetch(ctx, key, namespace, name)
		if err != nil {
			return zero, err
		}
		fresh, gone := c.admit(key, obj)
		switch {
		case gone:
			return zero, apierrors.NewNotFound(c.opts.Resource, name)
		case fresh:
			return obj, nil
		case try >= c.opts.Retries:
			c.counts.stale.Add(1)
			return zero, fmt.Errorf("ondemand %s: %s: %w (got resource version %s)", c.opts.Name, key, ErrBehind, obj.GetResourceVersion())
		}
	}
}

// Held returns the held whole object for namespace/name, if it is at
// least as new as the cached metadata, without a request and without
// counting as a read.
func (c *Cache[T]) Held(namespace, name string) (obj T, ok bool) {
	key := keyFor(namespace, name)
	m, ok := c.meta.Get(key)
	if !ok {
		return obj, false
	}
	e := c.held.peek(key)
	if e == nil || !e.atLeast(m.GetResourceVersion()) {
		return obj, false
	}
	return e.obj, true
}

// admit holds obj, fetched for key, if it is at least as new as the
// metadata cached now. gone reports that the metadata cache no longer
// has the object (it was deleted meanwhile): nothing is held then.
func (c *Cache[T]) admit(key string, obj T) (fresh, gone bool) {
	m, ok := c.meta.Get(key)
	if !ok {
		return false, true
	}
	pinned := c.pinned(m)
	e := newEntry(obj, obj.GetResourceVersion(), store.ObjectBytes(obj), pinned, c.now())
	if !e.atLeast(m.GetResourceVersion()) {
		return false, false
	}
	kept, demoted := c.held.put(key, e, c.opts.Budget)
	if kept {
		c.counts.promotions.Add(1)
		if c.opts.Metrics != nil {
			c.opts.Metrics.Promoted()
		}
	}
	c.demoted(DemotedBudget, demoted)
	return true, false
}

// fetch reads key from the server, sharing one request between
// concurrent reads of the same key.
func (c *Cache[T]) fetch(ctx context.Context, key, namespace, name string) (T, error) {
	c.mu.Lock()
	if cl := c.inflight[key]; cl != nil {
		c.mu.Unlock()
		select {
		case <-cl.done:
			if cl.err != nil && ctx.Err() == nil && isContextError(cl.err) {
				// The read that started the fetch gave up; this one
				// has not.
				return c.fetch(ctx, key, namespace, name)
			}
			return cl.obj, cl.err
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
	}
	cl := &call[T]{done: make(chan struct{})}
	c.inflight[key] = cl
	c.mu.Unlock()

	cl.obj, cl.err = c.fetchOne(ctx, namespace, name)

	c.mu.Lock()
	delete(c.inflight, key)
	c.mu.Unlock()
	close(cl.done)
	return cl.obj, cl.err
}

// fetchOne is one Get from the server, transformed, timed and counted.
func (c *Cache[T]) fetchOne(ctx context.Context, namespace, name string) (T, error) {
	start := c.clock.Now()
	obj, err := c.opts.Fetcher.Get(ctx, namespace, name)
	if err == nil && nilcheck.Is(obj) {
		err = fmt.Errorf("ondemand %s: the fetcher returned no object for %s without an error", c.opts.Name, name)
	}
	if err == nil {
		obj, err = c.transform(obj)
	}
	d := c.clock.Since(start)
	c.counts.fetches.Add(1)
	if err != nil {
		c.counts.fetchErrors.Add(1)
		c.log.V(4).Info("Fetch failed", "namespace", namespace, "name", name, "err", err)
	}
	if c.opts.Metrics != nil {
		c.opts.Metrics.Fetched(d, err)
	}
	if err != nil {
		var zero T
		return zero, err
	}
	return obj, nil
}

// transform applies Options.Transform to a fetched object.
func (c *Cache[T]) transform(obj T) (T, error) {
	if c.opts.Transform == nil {
		return obj, nil
	}
	out, err := c.opts.Transform(obj)
	if err == nil && nilcheck.Is(out) {
		err = errors.New("returned no object")
	}
	if err != nil {
		return out, fmt.Errorf("ondemand %s: transform of %s: %w", c.opts.Name, keyOf(obj), err)
	}
	return out, nil
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// changed is the metadata handler's add and update: a held object whose
// metadata moved past it goes back to metadata only (the next read
// fetches), unless it is pinned, which Run fetches again at once.
func (c *Cache[T]) changed(m metav1.Object) {
	key := keyOf(m)
	if c.pinned(m) {
		if e := c.held.peek(key); e == nil || !e.atLeast(m.GetResourceVersion()) {
			c.queueRefresh(key)
		}
		return
	}
	if c.held.drop(key, m.GetResourceVersion()) {
		c.demoted(DemotedChanged, 1)
	}
}

// deleted is the metadata handler's delete.
func (c *Cache[T]) deleted(m metav1.Object) {
	if c.held.drop(keyOf(m), "") {
		c.demoted(DemotedDeleted, 1)
	}
}

func (c *Cache[T]) demoted(r DemoteReason, n int) {
	if n == 0 {
		return
	}
	c.counts.demotions[demoteIndex(r)].Add(int64(n))
	if c.opts.Metrics != nil {
		for range n {
			c.opts.Metrics.Demoted(r)
		}
	}
}

func (c *Cache[T]) pinned(m metav1.Object) bool {
	return c.opts.Hold != nil && c.opts.Hold.Matches(labels.Set(m.GetLabels()))
}

func (c *Cache[T]) now() int64 { return c.clock.Now().UnixNano() }

// keyFor is the metadata cache's key of namespace/name.
func keyFor(namespace, name string) string {
	if namespace != "" {
		return namespace + "/" + name
	}
	return name
}

// keyOf is the metadata cache's key of an object (store.NamespacedKey's,
// for the named objects a server sends).
func keyOf(m metav1.Object) string { return objname.Of(m) }

// Stop removes the Cache's handler from the metadata informer. Held
// objects stay readable until the Cache is dropped.
func (c *Cache[T]) Stop() { c.stop() }
