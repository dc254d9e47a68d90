// Package reconciler is a small, complete controller built on listwatch: an
// informer feeds a typed work queue, and workers reconcile with rate-limited
// retries.
//
// The controller mirrors ConfigMaps: every ConfigMap labelled
// "mirror=true" gets a companion "<name>-mirror" in the same namespace with
// the same data, and a mirror whose source is gone is deleted.
package reconciler

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/store"
	"github.com/listwatch/listwatch/workqueue"
)

const (
	// SourceLabel marks a ConfigMap to mirror.
	SourceLabel = "mirror"
	// MirrorOfLabel marks a mirror, naming its source.
	MirrorOfLabel = "mirror-of"
	suffix        = "-mirror"
)

// Writer is the part of an API client the controller writes through; see
// ClientsetWriter and the fake server's own methods.
type Writer interface {
	Create(ctx context.Context, cm *corev1.ConfigMap) error
	Update(ctx context.Context, cm *corev1.ConfigMap) error
	Delete(ctx context.Context, namespace, name string) error
}

// Controller reconciles mirrors. Create it with New and run it with Run.
type Controller struct {
	inf    *informer.Informer[*corev1.ConfigMap]
	queue  *workqueue.Typed[string]
	writer Writer
	// Reconciles and Retries count work done, for reports and tests.
	mu                  sync.Mutex
	reconciles, retries int
}

// Options configures New. Informer and Writer are required.
type Options struct {
	// Informer caches the ConfigMaps (not yet running).
	Informer *informer.Informer[*corev1.ConfigMap]
	// Writer writes the mirrors.
	Writer Writer
	// Metrics, when set, receives the work queue's metrics (queue "mirror"),
	// e.g. a workqueue/promprovider.Provider.
	Metrics workqueue.MetricsProvider
}

// New wires a controller to an informer on ConfigMaps.
func New(ctx context.Context, opts Options) (*Controller, error) {
	if opts.Informer == nil || opts.Writer == nil {
		return nil, errors.New("reconciler: Options.Informer and Options.Writer are required")
	}
	inf := opts.Informer
	c := &Controller{inf: inf, writer: opts.Writer, queue: workqueue.New(ctx, workqueue.Options[string]{
		Name:            "mirror",
		RateLimiter:     workqueue.NewItemExponentialRateLimiter[string](5*time.Millisecond, 10*time.Second),
		MetricsProvider: opts.Metrics,
	})}
	enqueue := func(cm *corev1.ConfigMap) { c.queue.Add(sourceKey(cm)) }
	_, err := inf.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(cm *corev1.ConfigMap, _ bool) { enqueue(cm) },
		UpdateFunc: func(_, cm *corev1.ConfigMap) { enqueue(cm) },
		// No tombstone to unwrap: the last known object comes typed.
		DeleteFunc: func(cm *corev1.ConfigMap, _ bool) { enqueue(cm) },
	}, informer.HandlerOptions{})
	return c, err
}

// sourceKey maps a ConfigMap to the key of the source it concerns: a
// mirror's changes are reconciled as its source's.
func sourceKey(cm *corev1.ConfigMap) string {
	if src, ok := cm.Labels[MirrorOfLabel]; ok {
		return cm.Namespace + "/" + src
	}
	return cm.Namespace + "/" + cm.Name
}

// Run processes the queue with workers until ctx ends, then drains.
func (c *Controller) Run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c.processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	c.mu.Lock()
	c.reconciles++
	c.mu.Unlock()
	if err := c.reconcile(ctx, key); err != nil {
		klog.FromContext(ctx).V(2).Info("reconcile failed; retrying", "key", key, "err", err, "requeues", c.queue.NumRequeues(key))
		c.mu.Lock()
		c.retries++
		c.mu.Unlock()
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// reconcile makes the mirror of the source at key match it.
func (c *Controller) reconcile(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	r := c.inf.Reader().Namespace(ns)
	src, srcOK := r.Get(name)
	mirror, mirrorOK := r.Get(name + suffix)
	wanted := srcOK && src.Labels[SourceLabel] == "true"
	switch {
	case !wanted && mirrorOK && mirror.Labels[MirrorOfLabel] == name:
		return ignoreNotFound(c.writer.Delete(ctx, ns, name+suffix))
	case !wanted:
		return nil
	case !mirrorOK:
		return ignoreExists(c.writer.Create(ctx, desired(src, nil)))
	case !maps.Equal(mirror.Data, src.Data):
		return c.writer.Update(ctx, desired(src, mirror))
	}
	return nil
}

// desired is the mirror src should have; current supplies the RV to update.
func desired(src, current *corev1.ConfigMap) *corev1.ConfigMap {
	m := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: src.Namespace, Name: src.Name + suffix,
			Labels: map[string]string{MirrorOfLabel: src.Name}},
		Data: maps.Clone(src.Data),
	}
	if current != nil {
		m.ResourceVersion = current.ResourceVersion
	}
	return m
}

// Check compares the cache with what the controller should have made: it
// returns one line per source whose mirror is missing or stale, or per
// orphaned mirror.
func Check(r store.Reader[*corev1.ConfigMap]) []string {
	var bad []string
	for _, cm := range r.List() {
		ns := r.Namespace(cm.Namespace)
		if src, ok := cm.Labels[MirrorOfLabel]; ok {
			if s, ok := ns.Get(src); !ok || s.Labels[SourceLabel] != "true" {
				bad = append(bad, fmt.Sprintf("orphaned mirror %s/%s", cm.Namespace, cm.Name))
			}
			continue
		}
		if cm.Labels[SourceLabel] != "true" {
			continue
		}
		if m, ok := ns.Get(cm.Name + suffix); !ok || !maps.Equal(m.Data, cm.Data) {
			bad = append(bad, fmt.Sprintf("missing or stale mirror of %s/%s", cm.Namespace, cm.Name))
		}
	}
	return bad
}

// Counts returns how many reconciles ran and how many were retried.
func (c *Controller) Counts() (reconciles, retries int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reconciles, c.retries
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
