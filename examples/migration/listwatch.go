package migration

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/store"
	"github.com/listwatch/listwatch/workqueue"
)

// Counter counts pods per node the listwatch way.
type Counter struct {
	informer *informer.Informer[*corev1.Pod]
	queue    *workqueue.Typed[string]
	mu       sync.Mutex
	counts   map[string]int
}

// NewCounter builds the controller on any source (a client-go
// ListerWatcher works through cache.ToListerWatcherWithContext, a typed
// client through reflector.FromClient).
func NewCounter(ctx context.Context, src cache.ListerWatcherWithContext) (*Counter, error) {
	inf, err := informer.New(informer.Options[*corev1.Pod]{
		Source: src,
		// Single-valued, typed, and allocation-free.
		ValueIndexers: store.ValueIndexers[*corev1.Pod]{
			"node": func(p *corev1.Pod) (string, bool) { return p.Spec.NodeName, true },
		},
		Transform: informer.StripManagedFields[*corev1.Pod],
	})
	if err != nil {
		return nil, err
	}
	c := &Counter{informer: inf, queue: workqueue.New(ctx, workqueue.Options[string]{}), counts: map[string]int{}}
	enqueue := func(p *corev1.Pod) { c.queue.Add(p.Spec.NodeName) }
	_, err = inf.AddHandler(informer.HandlerFuncs[*corev1.Pod]{
		AddFunc: func(p *corev1.Pod, _ bool) { enqueue(p) },
		UpdateFunc: func(old, new *corev1.Pod) {
			enqueue(old)
			enqueue(new)
		},
		// The last known pod, typed; no tombstone.
		DeleteFunc: func(p *corev1.Pod, _ bool) { enqueue(p) },
	}, informer.HandlerOptions{})
	return c, err
}

// Run runs the informer and one worker until ctx ends.
func (c *Counter) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	go c.informer.Run(ctx)
	if err := c.informer.WaitForSync(ctx); err != nil {
		return err // says why: forbidden, not found, ...
	}
	go func() {
		for {
			node, shutdown := c.queue.Get()
			if shutdown {
				return
			}
			pods, err := c.informer.Reader().ByIndex("node", node) // []*corev1.Pod
			if err == nil {
				c.mu.Lock()
				c.counts[node] = len(pods)
				c.mu.Unlock()
			}
			c.queue.Done(node)
		}
	}()
	<-ctx.Done()
	return nil
}

// Counts returns a copy of the pods-per-node map.
func (c *Counter) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// Synced reports whether the informer has synced.
func (c *Counter) Synced() bool { return c.informer.HasSynced() }
