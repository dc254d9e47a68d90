// Package sharded is a controller that shares one resource with its other
// replicas through package shard: each replica holds a Lease in a ring,
// caches only the ConfigMaps of its slices (shard.Source, with server-side
// shard selectors when the API server applies them) and reconciles only
// those. Its work queue only ever sees owned keys.
//
// The reconcile is deliberately trivial, so that a test can check the
// end state from the server alone: the controller marks every ConfigMap of
// its namespace as reconciled at its current content, writing the hash of
// its data ([ContentHash]) to the [HashAnnotation] and its own identity to
// [ByAnnotation], with a resourceVersion precondition (a ConfigMap that
// changed meanwhile is retried from the cache).
//
// A replica reports what it does as [Event]s (the replica command prints
// them as JSON lines): changes of its part, keys its handlers gain and drop,
// and periodic stats (objects and bytes cached). The multi-process test in
// this package reads them to measure handovers.
package sharded

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/workqueue"
)

// The annotations the reconcile writes.
const (
	// HashAnnotation holds ContentHash of the data the object was last
	// reconciled at.
	HashAnnotation = "sharded.listwatch.io/reconciled"
	// ByAnnotation names the replica that reconciled it.
	ByAnnotation = "sharded.listwatch.io/by"
)

// ContentHash is the hash of a ConfigMap's data that the reconcile writes:
// the first 16 hex digits of the SHA-256 of its keys and values in key order.
func ContentHash(data map[string]string) string {
	h := sha256.New()
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%d:%s=%d:%s;", len(k), k, len(data[k]), data[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Options configures New.
type Options struct {
	// Client talks to the API server; required.
	Client kubernetes.Interface
	// Namespace holds the ConfigMaps and the ring's Leases; required.
	Namespace string
	// Ring and Identity name the ring and this replica in it (see
	// shard.MemberOptions); Ring is required unless Unsharded.
	Ring, Identity string
	// Slices, LeaseDuration and RenewInterval are passed to the Member.
	Slices                       int
	LeaseDuration, RenewInterval time.Duration
	// Fenced makes the Member hand over "at most one owner at a time"
	// (shard.MemberOptions.Fenced) instead of "never unowned".
	Fenced bool
	// Unsharded caches the whole namespace with a plain informer and
	// reconciles nothing: a baseline for what one replica would cache.
	Unsharded bool
	// WatchList chooses streaming or paginated lists for the informer
	// (reflector.Config.WatchList); the default streams when the server
	// can. Client-go's fake clientset cannot: use reflector.WatchListOff.
	WatchList reflector.WatchListMode
	// Workers is the number of reconcile workers; 0 means 2.
	Workers int
	// StatsInterval is the time between stats events; 0 means 250 ms.
	StatsInterval time.Duration
	// Events receives what the replica reports; nil discards it. Called
	// from several goroutines, one call at a time.
	Events func(Event)
}

// Event is one line of a replica's report.
type Event struct {
	// T is the wall-clock time in Unix nanoseconds.
	T int64 `json:"t"`
	// Ev is the kind: "change" (the replica's part changed), "add" (its
	// handlers got a key), "release" (it stops enqueueing a cached key: its
	// slice was lost), "drop" (a key moved away from its cache and
	// handlers, after the relist), "del" (a key was
	// deleted on the server), "unowned" (a change of a key the replica
	// does not own, not enqueued), "skip" (a worker found a queued key no
	// longer owned), "stats", "synced" (the informer synced),
	// "stopping" (handlers stop now: a graceful exit) or "error".
	Ev string `json:"ev"`
	// Key is the object's name, for add, drop and del.
	Key string `json:"key,omitempty"`
	// Members and Owned: the ring's live members and the slices owned, for
	// change and stats.
	Members []string `json:"members,omitempty"`
	Owned   int      `json:"owned"`
	// Gained and Lost count the slices of a change.
	Gained int `json:"gained,omitempty"`
	Lost   int `json:"lost,omitempty"`
	// Objects, Bytes and Heap (stats): objects cached, the sum of their
	// protobuf sizes, and the process's live heap after the last GC.
	Objects int   `json:"objects,omitempty"`
	Bytes   int64 `json:"bytes,omitempty"`
	Heap    int64 `json:"heap,omitempty"`
	// HeapAt is when Heap was measured (Unix nanoseconds): every eighth
	// stats line, so up to 8 StatsIntervals before T.
	HeapAt int64 `json:"heapAt,omitempty"`
	// Reconciles counts reconciles, Patches the writes they made, and
	// NotOwned the keys a worker found it no longer owned (skipped).
	Reconciles int64 `json:"reconciles,omitempty"`
	Patches    int64 `json:"patches,omitempty"`
	NotOwned   int64 `json:"notOwned,omitempty"`
	// ServerFiltered tells whether the server applied the shard selector
	// to the last list (stats).
	ServerFiltered bool `json:"serverFiltered,omitempty"`
	// Dropped counts the objects and events the Source's client-side
	// filter dropped (stats): 0 when the server applies shard selectors.
	Dropped int64 `json:"dropped,omitempty"`
	// Foreign counts cached objects the replica no longer owns (stats): a
	// handover whose relist has not yet dropped them.
	Foreign int `json:"foreign,omitempty"`
	// Withheld counts gained slices not yet handed out (fenced handover).
	Withheld int `json:"withheld,omitempty"`
	// Err is the message of an error event.
	Err string `json:"err,omitempty"`
}

// Controller is one replica. Create it with New and run it with Run.
type Controller struct {
	opts   Options
	inf    *informer.Informer[*corev1.ConfigMap]
	src    *shard.Source // nil when Unsharded
	member *shard.Member // nil when Unsharded
	queue  *workqueue.Typed[string]

	emitMu sync.Mutex

	reconciles, patches, notOwned atomic.Int64
}

// New wires a replica; Run starts it.
func New(ctx context.Context, opts Options) (*Controller, error) {
	if opts.Client == nil || opts.Namespace == "" {
		return nil, errors.New("sharded: Client and Namespace are required")
	}
	if opts.Workers == 0 {
		opts.Workers = 2
	}
	if opts.StatsInterval == 0 {
		opts.StatsInterval = 250 * time.Millisecond
	}
	c := &Controller{opts: opts}
	cms := opts.Client.CoreV1().ConfigMaps(opts.Namespace)
	var source = reflector.FromClient(cms)
	if !opts.Unsharded {
		src, err := shard.NewSource(ctx, shard.SourceOptions{Inner: source})
		if err != nil {
			return nil, err
		}
		c.src = src
		source = src
		c.member, err = shard.NewMember(ctx, shard.MemberOptions{
			Client: opts.Client, Namespace: opts.Namespace, Ring: opts.Ring, Identity: opts.Identity,
			Slices: opts.Slices, LeaseDuration: opts.LeaseDuration, RenewInterval: opts.RenewInterval,
			Fenced: opts.Fenced, OnChange: c.onChange,
		})
		if err != nil {
			return nil, err
		}
	}
	inf, err := informer.New(informer.Options[*corev1.ConfigMap]{Source: source,
		Reflector: reflector.Config[*corev1.ConfigMap]{WatchList: opts.WatchList}})
	if err != nil {
		return nil, err
	}
	c.inf = inf
	if c.src != nil {
		shard.Attach(c.src, inf) // relists from the cache; lost slices kept until handed over
	}
	c.queue = workqueue.New(ctx, workqueue.Options[string]{
		Name:        "sharded",
		RateLimiter: workqueue.NewItemExponentialRateLimiter[string](5*time.Millisecond, 2*time.Second),
	})
	_, err = inf.AddHandler(handler{c}, informer.HandlerOptions{})
	return c, err
}

// handler feeds the queue. As an informer.MovedAwayHandler over a
// shard.Source (an informer.Owner), it hears an object that moved to
// another replica through OnMovedAway rather than OnDelete.
type handler struct{ c *Controller }

func (h handler) OnAdd(cm *corev1.ConfigMap, _ bool) {
	h.c.emit(Event{Ev: "add", Key: cm.Name})
	h.c.enqueue(cm)
}

func (h handler) OnUpdate(_, cm *corev1.ConfigMap) {
	if !h.c.opts.Unsharded && !h.c.owns(cm) {
		h.c.emit(Event{Ev: "unowned", Key: cm.Name})
	}
	h.c.enqueue(cm)
}

// OnDelete hears a deletion on the server, also of a key whose slice the
// replica is handing over (still cached until the new owner has listed
// it): a controller that cleans up on delete does so here, whoever owns
// the key now.
func (h handler) OnDelete(cm *corev1.ConfigMap, _ bool) { h.c.emit(Event{Ev: "del", Key: cm.Name}) }

func (h handler) OnMovedAway(cm *corev1.ConfigMap) { h.c.emit(Event{Ev: "drop", Key: cm.Name}) }

var _ informer.MovedAwayHandler[*corev1.ConfigMap] = handler{}

// owns reports whether the replica owns cm now (always, unsharded).
func (c *Controller) owns(cm *corev1.ConfigMap) bool { return c.src == nil || c.src.Owns(cm) }

// enqueue hands cm's key to the workers if the replica owns it: an event
// that the informer delivers after the part changed (before its relist)
// is not for this replica any more.
func (c *Controller) enqueue(cm *corev1.ConfigMap) {
	if c.opts.Unsharded || !c.owns(cm) {
		return
	}
	c.queue.Add(cm.Name)
}

// onChange drives the Source and reports the change. From the moment the
// Source has it, the replica enqueues no key of a lost slice (enqueue
// checks Source.Owns), even though its cache and handlers keep them until
// their new owner has listed them: it reports those keys as released now.
// A gained slice's keys already cached (a slice lost and handed back
// before its new owner listed it) get no event of their own: it enqueues
// them now, since their changes meanwhile were not enqueued.
func (c *Controller) onChange(ch shard.Change) {
	c.src.OnChange(ch)
	c.emit(Event{Ev: "change", Members: ch.Assignment.Members(), Owned: len(ch.Assignment.Owned(ch.Member)),
		Gained: len(ch.Gained), Lost: len(ch.Lost), Withheld: len(ch.Withheld)})
	if ch.Empty() {
		return
	}
	lost, err := ch.LostMatcher(shard.FieldUID)
	if err != nil {
		c.emit(Event{Ev: "error", Err: err.Error()})
		return
	}
	gained, _ := ch.GainedMatcher(shard.FieldUID)
	for _, cm := range c.inf.Reader().List() {
		switch {
		case lost.Owns(cm):
			c.emit(Event{Ev: "release", Key: cm.Name})
		case gained.Owns(cm):
			c.enqueue(cm)
		}
	}
}

// emit stamps e and hands it to Options.Events.
func (c *Controller) emit(e Event) {
	if c.opts.Events == nil {
		return
	}
	e.T = time.Now().UnixNano()
	c.emitMu.Lock()
	defer c.emitMu.Unlock()
	c.opts.Events(e)
}

// Run runs the replica until ctx ends. Then it stops handing out keys
// first (informer, workers) and leaves the ring after (the Member releases
// its Lease), so the replica never hands out a key after the others may
// have taken it over.
func (c *Controller) Run(ctx context.Context) error {
	memberCtx, stopMember := context.WithCancel(context.WithoutCancel(ctx))
	defer stopMember()
	memberDone := make(chan error, 1)
	if c.member != nil {
		go func() { memberDone <- c.member.Run(memberCtx) }()
	} else {
		memberDone <- nil
	}
	var wg sync.WaitGroup
	var infErr error
	wg.Go(func() { infErr = c.inf.Run(ctx) })
	wg.Go(func() {
		if err := c.inf.WaitForSync(ctx); err == nil {
			c.emit(Event{Ev: "synced"})
		}
	})
	for range c.opts.Workers {
		wg.Go(func() {
			for c.processNext(ctx) {
			}
		})
	}
	wg.Go(func() { c.statsLoop(ctx) })
	<-ctx.Done()
	c.emit(Event{Ev: "stopping"})
	c.queue.ShutDown()
	wg.Wait()
	stopMember()
	return errors.Join(infErr, <-memberDone)
}

// statsLoop emits stats every StatsInterval until ctx ends, with the heap
// measured after a GC every eighth time.
func (c *Controller) statsLoop(ctx context.Context) {
	t := time.NewTicker(c.opts.StatsInterval)
	defer t.Stop()
	var heap, heapAt int64
	for i := 0; ; i++ {
		if i%8 == 0 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heap, heapAt = int64(ms.HeapAlloc), time.Now().UnixNano()
		}
		e := c.stats(heap)
		e.HeapAt = heapAt
		c.emit(e)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// stats is a stats event for now.
func (c *Controller) stats(heap int64) Event {
	e := Event{Ev: "stats", Heap: heap, Reconciles: c.reconciles.Load(), Patches: c.patches.Load(),
		NotOwned: c.notOwned.Load()}
	for _, cm := range c.inf.Reader().List() {
		e.Objects++
		e.Bytes += int64(cm.Size())
		if !c.owns(cm) {
			e.Foreign++
		}
	}
	if c.member != nil {
		st := c.member.Status()
		e.Members, e.Owned, e.Withheld = st.Members, st.Owned, st.Withheld
		e.ServerFiltered, _ = c.src.ServerFiltered()
		ss := c.src.Stats()
		e.Dropped = ss.DroppedObjects + ss.DroppedEvents
	}
	return e
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	c.reconciles.Add(1)
	if err := c.reconcile(ctx, key); err != nil {
		if ctx.Err() == nil && !apierrors.IsConflict(err) {
			klog.FromContext(ctx).V(2).Info("Reconcile failed; retrying", "key", key, "err", err)
		}
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// reconcile marks the cached ConfigMap key as reconciled at its content,
// if the replica still owns it.
func (c *Controller) reconcile(ctx context.Context, key string) error {
	cm, ok := c.inf.Reader().Namespace(c.opts.Namespace).Get(key)
	if !ok {
		return nil // deleted, or moved away
	}
	if !c.owns(cm) {
		c.notOwned.Add(1)
		c.emit(Event{Ev: "skip", Key: key})
		return nil
	}
	h := ContentHash(cm.Data)
	if cm.Annotations[HashAnnotation] == h {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": cm.ResourceVersion, // precondition: the content hashed
		"annotations":     map[string]string{HashAnnotation: h, ByAnnotation: c.opts.Identity},
	}})
	if err != nil {
		return err
	}
	_, err = c.opts.Client.CoreV1().ConfigMaps(c.opts.Namespace).Patch(ctx, key, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		c.patches.Add(1)
	}
	return err
}
