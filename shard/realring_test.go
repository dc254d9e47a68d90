package shard_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/internal/testing/testapiserver"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/shard"
)

// counting passes lists and watches on and counts list requests (pages
// and streaming lists included) and the objects they carried.
type counting struct {
	cache.ListerWatcherWithContext
	lists, objects atomic.Int64
}

func (c *counting) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := c.ListerWatcherWithContext.WatchWithContext(ctx, opts)
	if err != nil || !ptr.Deref(opts.SendInitialEvents, false) {
		return w, err
	}
	c.lists.Add(1)
	cw := &countingWatch{inner: w, out: make(chan watch.Event), stop: make(chan struct{})}
	go cw.run(&c.objects)
	return cw, nil
}

func (c *counting) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	l, err := c.ListerWatcherWithContext.ListWithContext(ctx, opts)
	c.lists.Add(1)
	if err == nil {
		c.objects.Add(int64(meta.LenList(l)))
	}
	return l, err
}

// countingWatch passes a streaming list's events on and counts its
// initial objects.
type countingWatch struct {
	inner    watch.Interface
	out      chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
}

func (w *countingWatch) ResultChan() <-chan watch.Event { return w.out }
func (w *countingWatch) Stop()                          { w.stopOnce.Do(func() { close(w.stop) }) }

func (w *countingWatch) run(objects *atomic.Int64) {
	defer close(w.out)
	defer w.inner.Stop()
	initial := true
	for {
		var ev watch.Event
		select {
		case e, ok := <-w.inner.ResultChan():
			if !ok {
				return
			}
			ev = e
		case <-w.stop:
			return
		}
		if o, ok := ev.Object.(metav1.Object); ok && ev.Type == watch.Bookmark && o.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
			initial = false
		}
		if initial && ev.Type == watch.Added {
			objects.Add(1)
		}
		select {
		case w.out <- ev:
		case <-w.stop:
			return
		}
	}
}

// ringReplica is one in-process replica: a Member on real Leases driving a
// Source under an informer, and what its handler holds.
type ringReplica struct {
	id     string
	inner  *counting // the Source's inner source
	member *shard.Member
	src    *shard.Source
	inf    *informer.Informer[*corev1.ConfigMap]
	stopM  context.CancelFunc // ends the Member (it releases its Lease)
	stopI  context.CancelFunc // ends the informer
	doneM  chan error
	doneI  chan error
}

// ringLog records, per key, when a replica's handler gained and dropped it.
type ringLog struct {
	mu      sync.Mutex
	held    map[string]map[string]bool // replica → keys its handler holds
	added   map[string]map[string]time.Time
	dropped map[string]map[string]time.Time // moved away only
	changed chan struct{}
}

func newRingLog() *ringLog {
	return &ringLog{held: map[string]map[string]bool{}, added: map[string]map[string]time.Time{},
		dropped: map[string]map[string]time.Time{}, changed: make(chan struct{}, 1)}
}

func (l *ringLog) record(replica, key string, add bool, moved bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range []map[string]map[string]time.Time{l.added, l.dropped} {
		if m[replica] == nil {
			m[replica] = map[string]time.Time{}
		}
	}
	if l.held[replica] == nil {
		l.held[replica] = map[string]bool{}
	}
	if add {
		l.held[replica][key] = true
		l.added[replica][key] = time.Now()
	} else {
		delete(l.held[replica], key)
		if moved {
			l.dropped[replica][key] = time.Now()
		}
	}
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// waitFor waits until ok holds on the log, or fails the test after d.
func (l *ringLog) waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		done := ok()
		l.mu.Unlock()
		if done {
			return
		}
		select {
		case <-l.changed:
		case <-deadline.C:
			t.Fatalf("%s: not within %v", what, d)
		}
	}
}

// TestRealRing runs a ring of in-process replicas on a real kube-apiserver
// with the ShardedListAndWatch gate on: Members on real Leases, Sources,
// informers. Three replicas partition 150 ConfigMaps; one leaves, and the
// two others take its keys; a fourth joins and takes its share. For each
// handover it measures, per key moved, the time from the old owner's
// handler dropping it to the new owner's handler getting it (gap when
// positive, overlap when negative). Skipped under -short.
func TestRealRing(t *testing.T) {
	srv, err := testapiserver.Start(t.Context(), t, testapiserver.Options{
		ExtraAPIServerArgs: []string{"--feature-gates=ShardedListAndWatch=true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	ctx := t.Context()
	const ns = "ring"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps(ns)
	var all []string
	for i := range 150 {
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, cm.Name)
	}
	log := newRingLog()
	start := func(id string) *ringReplica {
		r := &ringReplica{id: id, doneM: make(chan error, 1), doneI: make(chan error, 1)}
		var err error
		r.inner = &counting{ListerWatcherWithContext: reflector.FromClient(cms)}
		if r.src, err = shard.NewSource(ctx, shard.SourceOptions{Inner: r.inner}); err != nil {
			t.Fatal(err)
		}
		if r.member, err = shard.NewMember(ctx, shard.MemberOptions{Client: cs, Namespace: ns, Ring: "cms", Identity: id,
			Slices: 64, LeaseDuration: 3 * time.Second, RenewInterval: time.Second, OnChange: r.src.OnChange}); err != nil {
			t.Fatal(err)
		}
		if r.inf, err = informer.New(informer.Options[*corev1.ConfigMap]{Source: r.src}); err != nil {
			t.Fatal(err)
		}
		shard.Attach(r.src, r.inf)
		if _, err := r.inf.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
			AddFunc:    func(cm *corev1.ConfigMap, _ bool) { log.record(id, cm.Name, true, false) },
			DeleteFunc: func(cm *corev1.ConfigMap, _ bool) { log.record(id, cm.Name, false, !r.src.Owns(cm)) },
		}, informer.HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
		mctx, stopM := context.WithCancel(ctx)
		ictx, stopI := context.WithCancel(ctx)
		r.stopM, r.stopI = stopM, stopI
		go func() { r.doneM <- r.member.Run(mctx) }()
		go func() { r.doneI <- r.inf.Run(ictx) }()
		return r
	}
	// stop shuts a replica down gracefully: its informer and handler stop
	// first (it hands out nothing from then on: its keys count as dropped
	// at that instant), then its Member releases its Lease.
	stop := func(r *ringReplica) {
		at := time.Now()
		r.stopI()
		if err := <-r.doneI; err != nil {
			t.Error(err)
		}
		log.mu.Lock()
		for k := range log.held[r.id] {
			if log.dropped[r.id] == nil {
				log.dropped[r.id] = map[string]time.Time{}
			}
			log.dropped[r.id][k] = at
		}
		delete(log.held, r.id)
		log.mu.Unlock()
		r.stopM()
		if err := <-r.doneM; err != nil {
			t.Error(err)
		}
	}
	// partitioned reports whether the replicas' handlers hold the
	// collection exactly once between them, each its own part.
	partitioned := func(reps []*ringReplica) func() bool {
		return func() bool {
			seen := map[string]int{}
			for _, r := range reps {
				a := r.member.Assignment()
				if a == nil || len(a.Members()) != len(reps) {
					return false
				}
				for k := range log.held[r.id] {
					seen[k]++
				}
			}
			if len(seen) != len(all) {
				return false
			}
			for _, n := range seen {
				if n != 1 {
					return false
				}
			}
			return true
		}
	}
	// handover measures, for every key whose holder changed from one
	// snapshot to the next, new owner's add minus old owner's drop.
	type snapshot map[string]string // key → replica
	snap := func() snapshot {
		log.mu.Lock()
		defer log.mu.Unlock()
		s := snapshot{}
		for id, keys := range log.held {
			for k := range keys {
				s[k] = id
			}
		}
		return s
	}
	handover := func(what string, before, after snapshot) string {
		log.mu.Lock()
		defer log.mu.Unlock()
		var ds []time.Duration
		for k, from := range before {
			to := after[k]
			if to == from {
				continue
			}
			ds = append(ds, log.added[to][k].Sub(log.dropped[from][k]))
		}
		if len(ds) == 0 {
			return what + ": no key moved"
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return fmt.Sprintf("%s: %d keys moved; new add − old drop: min %v, median %v, max %v (positive: gap, negative: overlap)",
			what, len(ds), ds[0].Round(time.Millisecond), ds[len(ds)/2].Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond))
	}

	// requests reports the list requests (and objects listed) of reps
	// since the last call.
	type count struct{ lists, objects int64 }
	last := map[string]count{}
	requests := func(what string, reps []*ringReplica) string {
		out := what + ": list requests (objects) per replica:"
		for _, r := range reps {
			c := count{r.inner.lists.Load(), r.inner.objects.Load()}
			out += fmt.Sprintf(" %s %d (%d)", r.id, c.lists-last[r.id].lists, c.objects-last[r.id].objects)
			last[r.id] = c
		}
		return out
	}

	reps := []*ringReplica{start("r0"), start("r1"), start("r2")}
	log.waitFor(t, 30*time.Second, "three replicas partition the collection", partitioned(reps))
	for _, r := range reps {
		t.Logf("%s holds %d of %d", r.id, len(log.held[r.id]), len(all))
	}
	t.Log(requests("start", reps))

	// A graceful leave: r2 stops handing out, then deletes its Lease; r0
	// and r1 see the Lease go and relist.
	before := snap()
	stop(reps[2])
	reps = reps[:2]
	log.waitFor(t, 30*time.Second, "two replicas take over r2's keys", partitioned(reps))
	t.Log(handover("r2 leaves", before, snap()))
	t.Log(requests("r2 leaves", reps))

	// A join: r3 takes its share from r0 and r1.
	before = snap()
	reps = append(reps, start("r3"))
	log.waitFor(t, 30*time.Second, "r3 joins", partitioned(reps))
	t.Log(handover("r3 joins", before, snap()))
	t.Log(requests("r3 joins", reps))

	var keys []string
	for k := range snap() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, all) {
		t.Fatalf("held %d keys, want %d", len(keys), len(all))
	}
	for _, r := range reps {
		stop(r)
	}
}
