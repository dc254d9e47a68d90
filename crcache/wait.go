package crcache

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/listwatch/listwatch/reflector"
)

// waitingCache is controller-runtime's cache with one change: where
// controller-runtime waits for an informer to sync (GetInformer,
// GetInformerForKind, and Get and List unless ReaderFailOnMissingInformer
// is set), it stops waiting as soon as the informer's list has failed for a
// lasting reason (403 Forbidden, 401, 404: [reflector.Reason.Lasting]) and
// returns that error, instead of blocking until the context ends. The
// informer stays in the cache and keeps retrying (slowly): a later call
// that finds it synced, after RBAC is fixed, succeeds.
type waitingCache struct {
	cache.Cache
	scheme        *runtime.Scheme
	failOnMissing bool        // cache.Options.ReaderFailOnMissingInformer: reads never create or wait
	started       atomic.Bool // Start was called; controller-runtime waits only then
	live          *live       // Options.Live; nil without
}

func (c *waitingCache) Start(ctx context.Context) error {
	c.started.Store(true)
	return c.Cache.Start(ctx)
}

func (c *waitingCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if !blocks(opts) {
		return c.Cache.GetInformer(ctx, obj, opts...)
	}
	inf, err := c.Cache.GetInformer(ctx, obj, append(slices.Clone(opts), cache.BlockUntilSynced(false))...)
	if err != nil {
		return nil, err
	}
	if err := c.waitSynced(ctx, inf, fmt.Sprintf("%T", obj)); err != nil {
		return nil, err // as controller-runtime: no informer with the error
	}
	return inf, nil
}

func (c *waitingCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if !blocks(opts) {
		return c.Cache.GetInformerForKind(ctx, gvk, opts...)
	}
	inf, err := c.Cache.GetInformerForKind(ctx, gvk, append(slices.Clone(opts), cache.BlockUntilSynced(false))...)
	if err != nil {
		return nil, err
	}
	if err := c.waitSynced(ctx, inf, gvk.String()); err != nil {
		return nil, err
	}
	return inf, nil
}

// NeedLeaderElection is controller-runtime's cache's answer (false: a
// manager starts its caches on every replica, leader or not), which the
// wrapper must pass on: the manager asks it of the cache it is given.
func (c *waitingCache) NeedLeaderElection() bool { return needLeaderElection(c.Cache) }

// needLeaderElection is c's answer, for a wrapper of c: an embedded
// interface does not promote the methods of the value it holds.
func needLeaderElection(c cache.Cache) bool {
	le, ok := c.(interface{ NeedLeaderElection() bool })
	return ok && le.NeedLeaderElection()
}

func (c *waitingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if !c.failOnMissing && c.started.Load() {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			return err
		}
	}
	return c.Cache.Get(ctx, key, obj, opts...)
}

func (c *waitingCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if !c.failOnMissing && c.started.Load() {
		if item, ok := c.itemOf(list); ok {
			if _, err := c.GetInformer(ctx, item); err != nil {
				return err
			}
		}
	}
	return c.Cache.List(ctx, list, opts...)
}

// itemOf returns an object of the type list holds, as controller-runtime
// picks the informer of a List: metadata-only and unstructured lists by
// the kind they carry, typed ones by the scheme.
func (c *waitingCache) itemOf(list client.ObjectList) (client.Object, bool) {
	gvk := list.GetObjectKind().GroupVersionKind()
	switch list.(type) {
	case *metav1.PartialObjectMetadataList:
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List")))
		return m, gvk.Kind != ""
	case *unstructured.UnstructuredList:
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List")))
		return u, gvk.Kind != ""
	}
	gvk, err := apiutil.GVKForObject(list, c.scheme)
	if err != nil {
		return nil, false
	}
	obj, err := c.scheme.New(gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List")))
	if err != nil {
		return nil, false
	}
	o, ok := obj.(client.Object)
	return o, ok
}

// blocks reports whether opts ask GetInformer to wait for the sync (the
// default).
func blocks(opts []cache.InformerGetOption) bool {
	var o cache.InformerGetOptions
	for _, f := range opts {
		f(&o)
	}
	return o.BlockUntilSynced == nil || *o.BlockUntilSynced
}

// statusPoll is how often a wait for a sync looks at the informer's
// status for a lasting error.
const statusPoll = 50 * time.Millisecond

// waitSynced waits, if the cache has started, until inf has synced, its
// list has failed for a lasting reason, or ctx ends; the last two are
// errors saying why. Informers that are not listwatch's (a caller's
// cache.Options.NewInformer) are waited for as controller-runtime does.
func (c *waitingCache) waitSynced(ctx context.Context, inf cache.Informer, what string) error {
	if !c.started.Load() || inf.HasSynced() {
		return nil
	}
	st, ok := inf.(interface{ Status() reflector.Status })
	tick := time.NewTicker(statusPoll)
	defer tick.Stop()
	for !inf.HasSynced() {
		if ok {
			if s := st.Status(); s.LastError != nil && s.Reason.Lasting() {
				return fmt.Errorf("crcache: the informer of %s cannot sync (%s, %d failures in a row; it keeps retrying): %w",
					what, s.Reason, s.Failures, s.LastError)
			}
		}
		select {
		case <-ctx.Done():
			return apierrors.NewTimeoutError(fmt.Sprintf("failed waiting for the informer of %s to sync: %v", what, context.Cause(ctx)), 0)
		case <-tick.C:
		}
	}
	return nil
}
