package crsharded

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/listwatch/listwatch/crcache"
	"github.com/listwatch/listwatch/examples/sharded"
	"github.com/listwatch/listwatch/shard"
)

// HashAnnotation holds sharded.ContentHash of the data a ConfigMap was
// last reconciled at.
const HashAnnotation = "crsharded.listwatch.io/reconciled"

// Options configures Run.
type Options struct {
	// Namespace holds the ConfigMaps and the ring's Leases; required.
	Namespace string
	// Member is the replica's place in the ring; its Namespace defaults
	// to Namespace, its OnChange is the replica's.
	Member shard.MemberOptions
	// StatsInterval is the time between "cache" events; 0 means 200 ms.
	StatsInterval time.Duration
	// Events, if set, receives what the replica does.
	Events func(Event)
	// Logger is the manager's logger; the zero Logger discards.
	Logger logr.Logger
}

// Event is one line of a replica's report.
type Event struct {
	// T is when, in Unix nanoseconds.
	T int64 `json:"t"`
	// Ev is "change" (a new assignment: Members), "cache" (Keys, the
	// names of the ConfigMaps cached, sorted, with Reconciles and
	// Patches so far; sent when they change), "exit".
	Ev         string   `json:"ev"`
	Members    []string `json:"members,omitempty"`
	Keys       []string `json:"keys,omitempty"`
	Reconciles int64    `json:"reconciles,omitempty"`
	Patches    int64    `json:"patches,omitempty"`
	// NotOwned counts reconciles of a ConfigMap that the replica's latest
	// assignment gives to another replica (its key was queued before the
	// change and reconciled after).
	NotOwned int64 `json:"notOwned,omitempty"`
}

// Run runs one replica until ctx ends: a manager on crcache's sharded
// cache and the ConfigMap controller.
func Run(ctx context.Context, cfg *rest.Config, o Options) error {
	var emitMu sync.Mutex
	emit := func(e Event) {
		if o.Events == nil {
			return
		}
		e.T = time.Now().UnixNano()
		emitMu.Lock()
		defer emitMu.Unlock()
		o.Events(e)
	}
	mo := o.Member
	if mo.Namespace == "" {
		mo.Namespace = o.Namespace
	}
	mo.OnChange = func(c shard.Change) { emit(Event{Ev: "change", Members: c.Assignment.Members()}) }
	log := o.Logger
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Logger:  log,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{o.Namespace: {}}},
		NewCache: crcache.NewWithOptions(crcache.Options{Logger: log, Shard: &crcache.ShardOptions{
			Member:  mo,
			Objects: map[client.Object]shard.Field{&corev1.ConfigMap{}: shard.FieldUID},
		}}),
	})
	if err != nil {
		return err
	}
	r := &reconciler{c: mgr.GetClient(), member: crcache.ShardMember(mgr.GetCache())}
	if err := ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Complete(r); err != nil {
		return err
	}
	interval := o.StatsInterval
	if interval == 0 {
		interval = 200 * time.Millisecond
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		report(ctx, mgr.GetCache(), o.Namespace, r, interval, emit)
		return nil
	})); err != nil {
		return err
	}
	err = mgr.Start(ctx)
	emit(Event{Ev: "exit"})
	return err
}

// report emits a "cache" event whenever what the cache holds or the
// counters change, checked every interval, until ctx ends.
func report(ctx context.Context, c cache.Cache, namespace string, r *reconciler, interval time.Duration, emit func(Event)) {
	if !c.WaitForCacheSync(ctx) {
		return
	}
	var last Event
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		var list corev1.ConfigMapList
		if err := c.List(ctx, &list, client.InNamespace(namespace)); err == nil {
			e := Event{Ev: "cache", Keys: make([]string, 0, len(list.Items))}
			for _, cm := range list.Items {
				e.Keys = append(e.Keys, cm.Name)
			}
			slices.Sort(e.Keys)
			r.mu.Lock()
			e.Reconciles, e.Patches, e.NotOwned = r.reconciles, r.patches, r.notOwned
			r.mu.Unlock()
			if !slices.Equal(e.Keys, last.Keys) || e.Patches != last.Patches {
				emit(e)
				last = e
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// reconciler writes the hash of a ConfigMap's data to HashAnnotation.
type reconciler struct {
	c      client.Client
	member *shard.Member

	mu                            sync.Mutex
	reconciles, patches, notOwned int64
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.count(&r.reconciles)
	var cm corev1.ConfigMap
	if err := r.c.Get(ctx, req.NamespacedName, &cm); err != nil {
		// Deleted (or no longer owned: the cache no longer has it).
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if a := r.member.Assignment(); a != nil && a.OwnerOfKey(string(cm.UID)) != r.member.Identity() {
		r.count(&r.notOwned)
	}
	want := sharded.ContentHash(cm.Data)
	if cm.Annotations[HashAnnotation] == want {
		return ctrl.Result{}, nil
	}
	patched := cm.DeepCopy()
	if patched.Annotations == nil {
		patched.Annotations = map[string]string{}
	}
	patched.Annotations[HashAnnotation] = want
	// The resourceVersion precondition makes a patch from a stale cache
	// fail (409) rather than stamp old data's hash on new data.
	if err := r.c.Patch(ctx, patched, client.MergeFromWithOptions(&cm, client.MergeFromWithOptimisticLock{})); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return ctrl.Result{}, nil
		case apierrors.IsConflict(err): // the cache is behind: try again once it has caught up
			return ctrl.Result{RequeueAfter: 50 * time.Millisecond}, nil
		}
		return ctrl.Result{}, fmt.Errorf("patching %s: %w", req, err)
	}
	r.count(&r.patches)
	return ctrl.Result{}, nil
}

func (r *reconciler) count(n *int64) {
	r.mu.Lock()
	*n++
	r.mu.Unlock()
}
