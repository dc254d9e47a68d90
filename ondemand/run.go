package ondemand

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Run demotes held objects not read for Options.IdleAfter and keeps the
// objects Options.Hold selects held: once the metadata cache has synced,
// one list fetches them all, and each that later changes or starts to
// match is fetched again at once. It returns when ctx ends; without
// IdleAfter and Hold it only waits for that.
func (c *Cache[T]) Run(ctx context.Context) error {
	var tick <-chan time.Time
	if c.opts.IdleAfter > 0 {
		t := c.clock.NewTicker(max(c.opts.IdleAfter/4, time.Second))
		defer t.Stop()
		tick = t.C()
	}
	if c.opts.Hold != nil {
		if err := c.opts.Metadata.WaitForSync(ctx); err != nil {
			return err
		}
		c.holdListed(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
			c.demoted(DemotedIdle, c.held.idle(c.clock.Now().Add(-c.opts.IdleAfter).UnixNano()))
		case <-c.refresh:
			c.refreshQueued(ctx)
		}
	}
}

// holdListed lists the objects Options.Hold selects and holds them.
func (c *Cache[T]) holdListed(ctx context.Context) {
	start := c.clock.Now()
	objs, err := c.opts.Fetcher.List(ctx, "", metav1.ListOptions{LabelSelector: c.opts.Hold.String()})
	c.counts.lists.Add(1)
	if err != nil {
		// Each is fetched on its own instead, as it would be after a
		// change: queue them all.
		c.log.Error(err, "Listing the objects to hold failed; fetching them one by one", "selector", c.opts.Hold.String())
		for _, m := range c.meta.List("", c.opts.Hold) {
			c.queueRefresh(keyOf(m))
		}
		return
	}
	for _, obj := range objs {
		if obj, err = c.transform(obj); err == nil {
			c.admit(keyOf(obj), obj)
		}
	}
	c.log.V(2).Info("Held the objects selected to hold", "objects", len(objs), "took", c.clock.Since(start))
}

// queueRefresh asks Run to fetch key again.
func (c *Cache[T]) queueRefresh(key string) {
	c.mu.Lock()
	c.toRefresh[key] = struct{}{}
	c.mu.Unlock()
	select {
	case c.refresh <- struct{}{}:
	default:
	}
}

// refreshQueued fetches every queued key whose held object is missing or
// older than its metadata.
func (c *Cache[T]) refreshQueued(ctx context.Context) {
	c.mu.Lock()
	keys := c.toRefresh
	c.toRefresh = map[string]struct{}{}
	c.mu.Unlock()
	for key := range keys {
		if ctx.Err() != nil {
			return
		}
		m, ok := c.meta.Get(key)
		if !ok || !c.pinned(m) {
			continue
		}
		if e := c.held.peek(key); e != nil && e.atLeast(m.GetResourceVersion()) {
			continue
		}
		if obj, err := c.fetch(ctx, key, m.GetNamespace(), m.GetName()); err == nil {
			c.admit(key, obj)
		}
	}
}
