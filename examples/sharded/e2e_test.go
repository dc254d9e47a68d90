package sharded_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/examples/sharded"
	"github.com/listwatch/listwatch/internal/testing/testapiserver"
	"github.com/listwatch/listwatch/internal/testing/testproc"
	"github.com/listwatch/listwatch/shard"
)

// The ring's timing in the multi-process test: short, so that a crash is
// taken over within seconds.
const (
	e2eNamespace = "sharded"
	e2eRing      = "cms"
	e2eSlices    = 256
	e2eLease     = 2 * time.Second
	e2eRenew     = 500 * time.Millisecond
	e2eObjects   = 400
	// e2eChurnAfter is how long the churn goes on after each step.
	e2eChurnAfter = time.Second
	// e2eWait bounds every wait for a ring to converge.
	e2eWait = 45 * time.Second
)

// TestReplicaProcesses is the multi-process proof of package shard on a
// real kube-apiserver: the replica command (a sharded controller) runs as
// separate OS processes, each with its own service account token, its own
// informer and its own work queue, while the test creates, updates and
// deletes ConfigMaps. Three replicas converge, each caching about a third;
// one is killed with SIGKILL and the others take its slices over when its
// Lease expires; a replacement joins; the ring grows to five and shrinks
// to two (graceful exits). After each step the replicas' handlers hold
// every live ConfigMap exactly once, each by the owner the test computes,
// and every live ConfigMap carries the hash of its final data. The test
// logs, per handover, the time between the old owner dropping a key and
// the new owner getting it (gap when positive, overlap when negative), and
// what each replica caches next to an unsharded replica. It runs with the
// ShardedListAndWatch gate on (the server filters) and off (each replica
// filters on the client), and with the gate on and fenced replicas, where
// no key may be enqueued by two replicas at once. Skipped under -short.
func TestReplicaProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real kube-apiserver and replica processes")
	}
	bin := testproc.Build(t, "github.com/listwatch/listwatch/examples/sharded/replica")
	for _, tc := range []struct{ gate, fenced bool }{{true, false}, {false, false}, {true, true}} {
		name := fmt.Sprintf("ShardedListAndWatch=%v", tc.gate)
		if tc.fenced {
			name += "/fenced"
		}
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			runReplicaProcesses(t, bin, tc.gate, tc.fenced)
			t.Logf("wall time %v", time.Since(start).Round(100*time.Millisecond))
		})
	}
}

// world is what the test knows of the replicas, from their reports.
type world struct {
	mu      sync.Mutex
	held    map[string]map[string]bool      // replica → keys its handlers hold
	added   map[string]map[string]time.Time // replica → key → last add
	dropped map[string]map[string]time.Time // replica → key → last drop (moved away, stopped or killed)
	// released: replica → key → last time it stopped enqueueing the key
	// because its slice was lost (before its cache drops it)
	released map[string]map[string]time.Time
	stats    map[string]sharded.Event // replica → last stats
	change   map[string]sharded.Event // replica → last change
	synced   map[string]bool
	gone     map[string]bool // stopping or killed: its reports no longer count
	// told: key → whether some replica's handler ever got it; deleted:
	// key → the replicas whose handler was told of its deletion
	// (OnDelete, not a move).
	told    map[string]bool
	deleted map[string][]string
	// history: key → what the replicas reported of it, and the changes,
	// for the message of a step that does not converge.
	history map[string][]string
	changes []string
	// first: replica → its first change; adds and drops: replica → how
	// many keys its handlers got and dropped as moved away.
	first       map[string]time.Time
	adds, drops map[string]int
}

func newWorld() *world {
	return &world{held: map[string]map[string]bool{}, added: map[string]map[string]time.Time{},
		released: map[string]map[string]time.Time{},
		dropped:  map[string]map[string]time.Time{}, stats: map[string]sharded.Event{},
		change: map[string]sharded.Event{}, synced: map[string]bool{}, gone: map[string]bool{},
		told: map[string]bool{}, deleted: map[string][]string{}, history: map[string][]string{},
		first: map[string]time.Time{}, adds: map[string]int{}, drops: map[string]int{}}
}

// record applies one report line of replica id.
func (w *world) record(id string, e sharded.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gone[id] {
		return
	}
	at := time.Unix(0, e.T)
	for _, m := range []map[string]map[string]time.Time{w.added, w.dropped, w.released} {
		if m[id] == nil {
			m[id] = map[string]time.Time{}
		}
	}
	if w.held[id] == nil {
		w.held[id] = map[string]bool{}
	}
	if e.Key != "" {
		w.history[e.Key] = append(w.history[e.Key], fmt.Sprintf("%s %s %s", at.Format("15:04:05.000"), id, e.Ev))
	}
	switch e.Ev {
	case "change":
		if _, ok := w.first[id]; !ok {
			w.first[id] = at
		}
	case "add":
		w.adds[id]++
	case "drop":
		w.drops[id]++
	}
	if e.Ev == "change" {
		w.changes = append(w.changes, fmt.Sprintf("%s %s %v owned %d gained %d lost %d withheld %d",
			at.Format("15:04:05.000"), id, e.Members, e.Owned, e.Gained, e.Lost, e.Withheld))
	}
	switch e.Ev {
	case "add":
		w.held[id][e.Key] = true
		w.added[id][e.Key] = at
		if id != "base" {
			w.told[e.Key] = true
		}
	case "release":
		w.released[id][e.Key] = at
	case "drop":
		delete(w.held[id], e.Key)
		w.dropped[id][e.Key] = at
	case "del":
		delete(w.held[id], e.Key)
		if id != "base" {
			w.deleted[e.Key] = append(w.deleted[e.Key], id)
		}
	case "stats":
		w.stats[id] = e
	case "change":
		w.change[id] = e
	case "synced":
		w.synced[id] = true
	case "stopping":
		w.goneLocked(id, at)
	}
}

// goneLocked marks every key id holds as dropped at at and ignores id's
// later reports: it hands out nothing from then on.
func (w *world) goneLocked(id string, at time.Time) {
	for k := range w.held[id] {
		w.dropped[id][k] = at
	}
	delete(w.held, id)
	w.gone[id] = true
}

// holders maps every key held to the replicas holding it.
func (w *world) holders() map[string][]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string][]string{}
	for id, keys := range w.held {
		if id == "base" { // the unsharded baseline is no member
			continue
		}
		for k := range keys {
			out[k] = append(out[k], id)
		}
	}
	return out
}

// replica is one replica process.
type replica = testproc.Proc

// e2e is one run: a server, its clients and the replicas.
type e2e struct {
	t     *testing.T
	bin   string
	cs    kubernetes.Interface
	srv   *testapiserver.Server
	dir   string
	world *world
	live  map[string]*replica
	// fenced runs the replicas with -fenced.
	fenced bool
	// mu guards removed: the ConfigMaps the churn deleted since the
	// last step.
	mu      sync.Mutex
	removed []string
}

func runReplicaProcesses(t *testing.T, bin string, gate, fenced bool) {
	srv, err := testapiserver.Start(t.Context(), t, testapiserver.Options{
		ExtraAPIServerArgs: []string{fmt.Sprintf("--feature-gates=ShardedListAndWatch=%v", gate)},
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &e2e{t: t, bin: bin, fenced: fenced, cs: kubernetes.NewForConfigOrDie(srv.AdminConfig()), srv: srv, dir: t.TempDir(),
		world: newWorld(), live: map[string]*replica{}}
	e.setup()
	ctx := t.Context()
	for i := range e2eObjects {
		e.create(ctx, fmt.Sprintf("cm-%04d", i))
	}

	// Three replicas and an unsharded baseline.
	base := e.start("base", "-unsharded")
	stopChurn := e.churn()
	for _, id := range []string{"r0", "r1", "r2"} {
		e.start(id)
	}
	e.waitRing("r0", "r1", "r2")
	e.churnOn()
	stopChurn()
	total := e.converged("3 replicas start")
	e.startCost("r0", "r1", "r2")
	e.report(total, base, gate)
	e.kill(base)

	// kill -9 of r1 under churn: r0 and r2 take its slices over once its
	// Lease expires.
	before := e.holderSnapshot()
	stopChurn = e.churn()
	killed := time.Now()
	e.kill(e.live["r1"])
	e.waitRing("r0", "r2")
	seen := time.Since(killed)
	e.waitHeld(before, "r1")
	e.churnOn()
	stopChurn()
	e.converged("kill -9 r1")
	t.Logf("kill -9 r1: the survivors dropped it from the ring %v after the kill (lease %v, renewed every %v)",
		seen.Round(time.Millisecond), e2eLease, e2eRenew)
	// Within the Lease duration, the skew margin (fenced; 1 s by default)
	// and 5 s for the relist.
	if max := e.handover("kill -9 r1", before); max > e2eLease+time.Second+5*time.Second {
		t.Errorf("kill -9 r1: a key took %v to be taken over; want within the lease duration, margin and relist", max)
	}

	// A replacement joins: 2 → 3.
	before = e.holderSnapshot()
	stopChurn = e.churn()
	e.start("r3")
	e.waitRing("r0", "r2", "r3")
	e.churnOn()
	stopChurn()
	e.converged("r3 joins")
	e.gracefulHandover("2 → 3 (r3 joins)", before)

	// Scale out: 3 → 5.
	before = e.holderSnapshot()
	stopChurn = e.churn()
	e.start("r4")
	e.start("r5")
	e.waitRing("r0", "r2", "r3", "r4", "r5")
	e.churnOn()
	stopChurn()
	e.converged("3 → 5 (r4, r5 join)")
	e.gracefulHandover("3 → 5 (r4, r5 join)", before)

	// Scale in: 5 → 2, graceful exits.
	before = e.holderSnapshot()
	stopChurn = e.churn()
	for _, id := range []string{"r0", "r3", "r4"} {
		e.stop(e.live[id])
	}
	e.waitRing("r2", "r5")
	e.churnOn()
	stopChurn()
	e.converged("5 → 2")
	e.gracefulHandover("5 → 2 (r0, r3, r4 leave)", before)

	for _, id := range slices.Sorted(maps.Keys(e.live)) {
		e.stop(e.live[id])
	}
	e.world.mu.Lock()
	defer e.world.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(e.world.stats)) {
		if s := e.world.stats[id]; id != "base" {
			t.Logf("%s (last report): %d reconciles, %d patches, %d queued keys found no longer owned (skipped)",
				id, s.Reconciles, s.Patches, s.NotOwned)
		}
	}
}

// startCost logs, for replicas started together, when each published its
// first assignment and how many keys its handlers got and dropped as moved
// away until the ring converged: with the join window, each lists only
// its part, at the price of listing later.
func (e *e2e) startCost(ids ...string) {
	e.world.mu.Lock()
	defer e.world.mu.Unlock()
	for _, id := range ids {
		e.t.Logf("%s: first assignment %v after its start; %d keys added, %d moved away until the ring converged",
			id, e.world.first[id].Sub(e.live[id].Started).Round(time.Millisecond), e.world.adds[id], e.world.drops[id])
	}
}

// setup creates the namespace, a Role for the replicas and, per replica,
// a service account bound to it; kubeconfig writes each one's file.
func (e *e2e) setup() {
	t, ctx := e.t, e.t.Context()
	if _, err := e.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e2eNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "replica"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "patch"}},
		{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "delete"}},
	}}
	if _, err := e.cs.RbacV1().Roles(e2eNamespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// kubeconfig creates replica id's service account, binds it to the Role
// and writes a kubeconfig with a token of its own.
func (e *e2e) kubeconfig(id string) string {
	t, ctx := e.t, e.t.Context()
	if _, err := e.cs.CoreV1().ServiceAccounts(e2eNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: id}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "replica-" + id},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "replica"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: id, Namespace: e2eNamespace}}}
	if _, err := e.cs.RbacV1().RoleBindings(e2eNamespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := e.cs.CoreV1().ServiceAccounts(e2eNamespace).CreateToken(ctx, id,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	admin := e.srv.AdminConfig()
	c := clientcmdapi.NewConfig()
	c.Clusters["e2e"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
	c.AuthInfos[id] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	c.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: id}
	c.CurrentContext = "e2e"
	path := filepath.Join(e.dir, id+".kubeconfig")
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// start runs replica id as a process; it is killed when the test ends.
func (e *e2e) start(id string, extra ...string) *replica {
	t := e.t
	args := append([]string{"-kubeconfig", e.kubeconfig(id), "-namespace", e2eNamespace, "-ring", e2eRing,
		"-identity", id, "-slices", fmt.Sprint(e2eSlices), "-lease-duration", e2eLease.String(),
		"-renew-interval", e2eRenew.String(), fmt.Sprintf("-fenced=%v", e.fenced)}, extra...)
	r := testproc.Start(t, id, e.dir, exec.Command(e.bin, args...), func(line []byte) {
		var ev sharded.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Errorf("%s: bad report line %q: %v", id, line, err)
			return
		}
		e.world.record(id, ev)
	})
	e.live[id] = r
	return r
}

// kill ends r with SIGKILL: what it held counts as dropped now, and its
// reports not yet read are ignored.
func (e *e2e) kill(r *replica) {
	e.world.mu.Lock()
	e.world.goneLocked(r.ID, time.Now())
	e.world.mu.Unlock()
	if err := r.Kill(); err != nil {
		e.t.Fatal(err)
	}
	delete(e.live, r.ID)
}

// stop ends r with SIGTERM and waits for it: it reports "stopping" when
// its handlers stop, then releases its Lease.
func (e *e2e) stop(r *replica) {
	if err := r.Stop(e2eWait); err != nil {
		e.t.Errorf("%s: %v", r.ID, err)
	}
	delete(e.live, r.ID)
}

// eventually polls ok until it holds or fails the test after e2eWait.
func (e *e2e) eventually(what string, ok func() (bool, string)) time.Duration {
	e.t.Helper()
	start := time.Now()
	deadline := start.Add(e2eWait)
	for {
		done, why := ok()
		if done {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: not within %v: %s", what, e2eWait, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitRing waits until every replica in ids has published an assignment
// of exactly ids, and its informer has synced.
func (e *e2e) waitRing(ids ...string) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("ring %v", ids), func() (bool, string) {
		e.world.mu.Lock()
		defer e.world.mu.Unlock()
		for _, id := range ids {
			if got := e.world.change[id].Members; !slices.Equal(got, ids) {
				return false, fmt.Sprintf("%s sees %v", id, got)
			}
			if !e.world.synced[id] {
				return false, id + " has not synced"
			}
		}
		return true, ""
	})
}

// waitHeld waits until every key of before held by from is held by some
// replica again or deleted.
func (e *e2e) waitHeld(before map[string]string, from string) {
	e.t.Helper()
	e.eventually("keys of "+from+" taken over", func() (bool, string) {
		now := e.holders()
		live := e.liveNames()
		for k, h := range before {
			if h == from && live[k] && len(now[k]) == 0 {
				return false, k + " has no holder"
			}
		}
		return true, ""
	})
}

func (e *e2e) holders() map[string][]string { return e.world.holders() }

// holderSnapshot maps each key held by exactly one replica to it.
func (e *e2e) holderSnapshot() map[string]string {
	out := map[string]string{}
	for k, hs := range e.holders() {
		if len(hs) == 1 {
			out[k] = hs[0]
		}
	}
	return out
}

func (e *e2e) list() []corev1.ConfigMap {
	l, err := e.cs.CoreV1().ConfigMaps(e2eNamespace).List(e.t.Context(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

func (e *e2e) liveNames() map[string]bool {
	out := map[string]bool{}
	for _, cm := range e.list() {
		out[cm.Name] = true
	}
	return out
}

// converged waits, with the churn stopped, until the live replicas'
// handlers hold every live ConfigMap exactly once, each by its owner under
// the assignment of the live replicas, and every one carries the hash of
// its data; it returns the number of live ConfigMaps.
func (e *e2e) converged(step string) int {
	e.t.Helper()
	ids := slices.Sorted(maps.Keys(e.live))
	ids = slices.DeleteFunc(ids, func(id string) bool { return id == "base" })
	a := shard.MustAssign(ids, shard.Options{Slices: e2eSlices})
	var n int
	took := e.eventually(step+": every ConfigMap held once by its owner and reconciled", func() (bool, string) {
		items := e.list()
		n = len(items)
		hs := e.holders()
		held := 0
		for _, cm := range items {
			owner := a.OwnerOfKey(string(cm.UID))
			got := hs[cm.Name]
			if len(got) != 1 || got[0] != owner {
				e.world.mu.Lock()
				h, cs := e.world.history[cm.Name], e.world.changes
				e.world.mu.Unlock()
				return false, fmt.Sprintf("%s held by %v, owner %s; its history:\n%s\nchanges:\n%s", cm.Name, got, owner,
					strings.Join(h, "\n"), strings.Join(cs[max(0, len(cs)-30):], "\n"))
			}
			held++
			if h := sharded.ContentHash(cm.Data); cm.Annotations[sharded.HashAnnotation] != h {
				e.world.mu.Lock()
				hist := e.world.history[cm.Name]
				e.world.mu.Unlock()
				return false, fmt.Sprintf("%s (rv %s) reconciled at %q by %s, content %q; its history:\n%s", cm.Name, cm.ResourceVersion,
					cm.Annotations[sharded.HashAnnotation], cm.Annotations[sharded.ByAnnotation], h, strings.Join(hist, "\n"))
			}
		}
		if len(hs) != held {
			return false, fmt.Sprintf("replicas hold %d keys, %d live", len(hs), held)
		}
		return true, ""
	})
	e.t.Logf("%s: %d ConfigMaps held once by their owners and reconciled at their final content %v after the churn stopped",
		step, n, took.Round(time.Millisecond))
	e.deletions(step)
	return n
}

// deletions logs how many of the ConfigMaps the churn deleted since the
// last step some replica's handler had got, and of those how many no
// replica was told of as deleted: a controller cleaning up on delete
// would leak them. Lost ones are an error after a join, where the old
// owner keeps the slices it hands over until the new owner has listed
// them (a crash, or a graceful exit whose handlers stop first, cannot).
func (e *e2e) deletions(step string) {
	e.mu.Lock()
	removed := e.removed
	e.removed = nil
	e.mu.Unlock()
	e.world.mu.Lock()
	defer e.world.mu.Unlock()
	seen, lost := 0, 0
	for _, k := range removed {
		if !e.world.told[k] {
			continue // created and deleted before any replica listed it
		}
		seen++
		if len(e.world.deleted[k]) == 0 {
			lost++
			e.t.Logf("%s: %s was deleted, and no replica was told", step, k)
		}
	}
	e.t.Logf("%s: %d deletions of ConfigMaps some replica had; %d told to no replica as deleted", step, seen, lost)
	if lost > 0 && strings.Contains(step, "join") {
		e.t.Errorf("%s: %d deletions lost in a join's handovers", step, lost)
	}
}

// handover logs, for every key held by one replica in before and by
// another now, the new holder's add minus the old holder's drop from its
// handlers (positive: a gap; negative: an overlap), and the same at the
// work queue: the new holder's add minus the moment the old one stopped
// enqueueing the key (at the Change, before its relist drops it). It
// returns the largest handler-level figure. Fenced, no key may overlap at
// the queue.
func (e *e2e) handover(what string, before map[string]string) time.Duration {
	after := e.holderSnapshot()
	e.world.mu.Lock()
	defer e.world.mu.Unlock()
	var cache, queue []time.Duration
	for k, from := range before {
		to, ok := after[k]
		if !ok || to == from {
			continue
		}
		add, drop := e.world.added[to][k], e.world.dropped[from][k]
		cache = append(cache, add.Sub(drop))
		stop := drop
		if rel, ok := e.world.released[from][k]; ok && rel.After(e.world.added[from][k]) && rel.Before(drop) {
			stop = rel
		}
		queue = append(queue, add.Sub(stop))
	}
	if len(cache) == 0 {
		e.t.Logf("%s: no key moved", what)
		return 0
	}
	e.t.Logf("%s: %d keys moved; handlers: %s; queue: %s", what, len(cache), spread(cache), spread(queue))
	if e.fenced && slices.Min(queue) < 0 {
		e.t.Errorf("%s: fenced, yet a key was enqueued by two replicas at once for %v", what, -slices.Min(queue))
	}
	return slices.Max(cache)
}

// spread summarises new add − old drop figures: how many gaps and
// overlaps, and the min, median and max.
func spread(ds []time.Duration) string {
	ds = slices.Sorted(slices.Values(ds))
	gaps, overlaps := 0, 0
	for _, d := range ds {
		if d > 0 {
			gaps++
		} else if d < 0 {
			overlaps++
		}
	}
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("%d gaps, %d overlaps, min %v, median %v, max %v",
		gaps, overlaps, r(ds[0]), r(ds[len(ds)/2]), r(ds[len(ds)-1]))
}

// gracefulHandover is handover for joins and graceful leaves, which must
// not leave a key unowned for long: no gap beyond a few relists.
func (e *e2e) gracefulHandover(what string, before map[string]string) {
	if max := e.handover(what, before); max > 10*time.Second {
		e.t.Errorf("%s: a key had no holder for %v", what, max)
	}
}

// report logs what each replica caches next to the unsharded baseline and
// checks that each caches about a third.
func (e *e2e) report(total int, base *replica, gate bool) {
	since := time.Now().UnixNano() // converged: the next stats lines count
	e.eventually("stats of every replica at the converged state", func() (bool, string) {
		e.world.mu.Lock()
		defer e.world.mu.Unlock()
		for id := range e.live {
			if s := e.world.stats[id]; s.HeapAt <= since || (id == "base" && s.Objects != total) {
				return false, id + " has not measured its cache and heap since the ring converged"
			}
		}
		return true, ""
	})
	e.world.mu.Lock()
	defer e.world.mu.Unlock()
	b := e.world.stats[base.ID]
	e.t.Logf("unsharded replica: %d objects, %d bytes of objects, heap %.1f MB", b.Objects, b.Bytes, float64(b.Heap)/1e6)
	for _, id := range []string{"r0", "r1", "r2"} {
		s := e.world.stats[id]
		e.t.Logf("%s: %d slices, %d objects (%.0f%%), %d bytes of objects (%.0f%% of unsharded), heap %.1f MB (%.0f%%), dropped by the client filter %d",
			id, s.Owned, s.Objects, 100*float64(s.Objects)/float64(total), s.Bytes, 100*float64(s.Bytes)/float64(b.Bytes),
			float64(s.Heap)/1e6, 100*float64(s.Heap)/float64(b.Heap), s.Dropped)
		if frac := float64(s.Objects) / float64(total); frac < 0.2 || frac > 0.47 {
			e.t.Errorf("%s caches %d of %d objects; want about a third", id, s.Objects, total)
		}
		if gate != (s.Dropped == 0) {
			e.t.Errorf("%s: the client filter dropped %d objects and events with the gate %v", id, s.Dropped, gate)
		}
	}
}

// churn creates, updates and deletes ConfigMaps (about 25 writes a second)
// until the returned func is called; it returns when the churn has stopped.
func (e *e2e) churn() func() {
	ctx, cancel := context.WithCancel(e.t.Context())
	done := make(chan struct{})
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	names := slices.Sorted(maps.Keys(e.liveNames()))
	go func() {
		defer close(done)
		tick := time.NewTicker(40 * time.Millisecond)
		defer tick.Stop()
		cms := e.cs.CoreV1().ConfigMaps(e2eNamespace)
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			switch p := rng.IntN(10); {
			case p < 5 && len(names) > 0: // update
				n := names[rng.IntN(len(names))]
				patch := fmt.Sprintf(`{"data":{"v":"%d"}}`, rng.Uint64())
				_, _ = cms.Patch(ctx, n, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			case p < 5+int(2.5*float64(e2eObjects)/float64(max(len(names), 1))): // create, more when few
				n := fmt.Sprintf("cm-%d", rng.Uint64()%1e12)
				if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n},
					Data: map[string]string{"v": "0"}}, metav1.CreateOptions{}); err == nil {
					names = append(names, n)
				}
			case len(names) > 0: // delete
				i := rng.IntN(len(names))
				if err := cms.Delete(ctx, names[i], metav1.DeleteOptions{}); err == nil {
					e.mu.Lock()
					e.removed = append(e.removed, names[i])
					e.mu.Unlock()
				}
				names = slices.Delete(names, i, i+1)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// churnOn lets the churn go on for a while after a step, so that the new
// owners reconcile writes too.
func (e *e2e) churnOn() { time.Sleep(e2eChurnAfter) }

func (e *e2e) create(ctx context.Context, name string) {
	_, err := e.cs.CoreV1().ConfigMaps(e2eNamespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name},
		Data: map[string]string{"v": "0", "payload": strings.Repeat("x", 2048)}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
}
