package migration

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// NewInformerFunc is client-go's cache.NewSharedIndexInformer signature,
// which listwatch's lwcache.NewSharedIndexInformer shares.
type NewInformerFunc func(cache.ListerWatcher, runtime.Object, time.Duration, cache.Indexers) cache.SharedIndexInformer

// ClientGoCounter counts pods per node the client-go way.
type ClientGoCounter struct {
	informer cache.SharedIndexInformer
	queue    workqueue.TypedRateLimitingInterface[string]
	mu       sync.Mutex
	counts   map[string]int
}

// NewClientGoCounter builds the controller with newInformer:
// cache.NewSharedIndexInformer or lwcache.NewSharedIndexInformer.
func NewClientGoCounter(lw cache.ListerWatcher, newInformer NewInformerFunc) *ClientGoCounter {
	c := &ClientGoCounter{
		informer: newInformer(lw, &corev1.Pod{}, 0, cache.Indexers{
			"node": func(obj any) ([]string, error) {
				return []string{obj.(*corev1.Pod).Spec.NodeName}, nil // a cast per call
			},
		}),
		queue:  workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		counts: map[string]int{},
	}
	enqueue := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			// A deletion noticed by a relist arrives as a tombstone.
			tomb, ok := obj.(cache.DeletedFinalStateUnknown)
			if !ok {
				return
			}
			if pod, ok = tomb.Obj.(*corev1.Pod); !ok {
				return
			}
		}
		c.queue.Add(pod.Spec.NodeName)
	}
	c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, new any) {
			enqueue(old) // a pod may move between nodes only by re-creation, but be safe
			enqueue(new)
		},
		DeleteFunc: enqueue,
	})
	return c
}

// Run runs the informer and one worker until ctx ends.
func (c *ClientGoCounter) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	go c.informer.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), c.informer.HasSynced) {
		return ctx.Err() // no reason given
	}
	go func() {
		for {
			node, shutdown := c.queue.Get()
			if shutdown {
				return
			}
			pods, err := c.informer.GetIndexer().ByIndex("node", node)
			if err == nil {
				c.mu.Lock()
				c.counts[node] = len(pods) // []any: each element is an any to cast
				c.mu.Unlock()
			}
			c.queue.Done(node)
		}
	}()
	<-ctx.Done()
	return nil
}

// Counts returns a copy of the pods-per-node map (nodes with no pods left
// are reported with 0).
func (c *ClientGoCounter) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// Synced reports whether the informer has synced.
func (c *ClientGoCounter) Synced() bool { return c.informer.HasSynced() }
