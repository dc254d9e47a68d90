package fake

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ChurnOptions configures a Churn.
type ChurnOptions struct {
	// Resource is the resource to churn; it must be served.
	Resource schema.GroupVersionResource
	// Namespaces the objects live in (ignored for cluster-scoped
	// resources); nil means {"default"}.
	Namespaces []string
	// Seed makes the sequence of operations reproducible: the same seed
	// against a server that only the churn writes gives the same writes.
	Seed uint64
	// MaxObjects caps the live objects the churn keeps; zero means 50.
	MaxObjects int
	// Rate is the operations per second of Run; zero means 100.
	Rate float64
	// NewObject returns a fresh object to create. Nil means a built-in one for
	// pods, configmaps and unstructured resources.
	NewObject func(namespace, name string) runtime.Object
}

// Churn drives create/update/delete traffic against a Server. Updates flip
// the label "churn" between "a" and "b" (so selectors see objects leave and
// enter) and bump the annotation "churn/gen". A Churn is not safe for
// concurrent use.
type Churn struct {
	// srv and opts are immutable; rnd is the seeded source.
	srv  *Server
	opts ChurnOptions
	res  *resourceState
	rnd  *rand.Rand
	// seq numbers created objects; only grows.
	seq int
}

// NewChurn returns a churn generator for opts.
func NewChurn(srv *Server, opts ChurnOptions) (*Churn, error) {
	r, err := srv.resource(opts.Resource)
	if err != nil {
		return nil, err
	}
	if opts.MaxObjects < 0 || opts.Rate < 0 {
		return nil, errors.New("fake: negative MaxObjects or Rate")
	}
	if len(opts.Namespaces) == 0 {
		opts.Namespaces = []string{"default"}
	}
	if !r.cfg.Namespaced {
		opts.Namespaces = []string{""}
	}
	if opts.MaxObjects == 0 {
		opts.MaxObjects = 50
	}
	if opts.Rate == 0 {
		opts.Rate = 100
	}
	if opts.NewObject == nil {
		opts.NewObject = r.defaultObject
	}
	return &Churn{srv: srv, opts: opts, res: r, rnd: rand.New(rand.NewPCG(opts.Seed, 0x6c697374))}, nil
}

// Step performs one operation: a create, an update or a delete, chosen at
// random (creates only when there is nothing, deletes only when full).
func (c *Churn) Step(ctx context.Context) error {
	keys := c.liveKeys()
	op := c.rnd.IntN(10)
	switch {
	case len(keys) == 0 || (op < 4 && len(keys) < c.opts.MaxObjects):
		c.seq++
		ns := c.opts.Namespaces[c.rnd.IntN(len(c.opts.Namespaces))]
		obj := c.opts.NewObject(ns, fmt.Sprintf("churn-%d", c.seq))
		_, err := c.srv.Create(ctx, obj)
		return err
	case op < 8:
		cur, err := c.get(keys[c.rnd.IntN(len(keys))])
		if err != nil {
			return err
		}
		m, _ := meta.Accessor(cur)
		c.mutate(m)
		_, err = c.srv.Update(ctx, cur)
		return err
	default:
		cur, err := c.get(keys[c.rnd.IntN(len(keys))])
		if err != nil {
			return err
		}
		_, err = c.srv.Delete(ctx, cur)
		return err
	}
}

// Steps performs n operations, stopping at the first error.
func (c *Churn) Steps(ctx context.Context, n int) error {
	for range n {
		if err := c.Step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Run performs operations at opts.Rate on the server's clock until ctx is
// done (returning nil) or an operation fails.
func (c *Churn) Run(ctx context.Context) error {
	interval := time.Duration(float64(time.Second) / c.opts.Rate)
	for {
		t := c.srv.clock.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
		if err := c.Step(ctx); err != nil {
			return err
		}
	}
}

func (c *Churn) mutate(m metav1.Object) {
	labels := m.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["churn"] = map[bool]string{true: "a", false: "b"}[c.rnd.IntN(2) == 0]
	m.SetLabels(labels)
	ann := m.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["churn/gen"] = fmt.Sprint(c.rnd.Uint32())
	m.SetAnnotations(ann)
}

func (c *Churn) liveKeys() []string {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	keys := make([]string, 0, len(c.res.objects))
	for k := range c.res.objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (c *Churn) get(k string) (runtime.Object, error) {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	obj, ok := c.res.objects[k]
	if !ok {
		return nil, fmt.Errorf("fake: churn lost %s", k)
	}
	return obj.DeepCopyObject(), nil
}

// defaultObject is a minimal object of r's type.
func (r *resourceState) defaultObject(namespace, name string) runtime.Object {
	labels := map[string]string{"churn": "a"}
	switch {
	case r.cfg.Unstructured:
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetGroupVersionKind(r.gvk)
		u.SetNamespace(namespace)
		u.SetName(name)
		u.SetLabels(labels)
		return u
	case r.gvk.Kind == "Pod" && r.gvk.Group == "":
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
	}
	obj := r.newObject()
	m, _ := meta.Accessor(obj)
	m.SetNamespace(namespace)
	m.SetName(name)
	m.SetLabels(labels)
	return obj
}
