package crcache_test

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/listwatch/listwatch/crcache"
	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/shard"
)

// shardSlices is the ring's slice count in these tests.
const shardSlices = 64

// shardWorld is a fake apiserver with ConfigMaps and Pods in namespaces
// a and b, and the Lease client the members share.
type shardWorld struct {
	t      *testing.T
	srv    *fake.Server
	leases *k8sfake.Clientset
	// poke is signalled on every event of any member's informers (before
	// any filter) and every Change: what a wait re-checks on.
	poke chan struct{}
}

func newShardWorld(t *testing.T, mode fake.ShardSelectorMode) *shardWorld {
	t.Helper()
	srv := fake.NewTestServer(t, fake.Options{UIDSeed: 29, ShardSelectors: mode})
	for i := range 60 {
		ns := []string{"a", "b"}[i%2]
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm%02d", i)}, Data: map[string]string{"k": "v"}}
		if _, err := srv.Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: fmt.Sprintf("p%d", i)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		if _, err := srv.Create(t.Context(), pod); err != nil {
			t.Fatal(err)
		}
	}
	return &shardWorld{t: t, srv: srv, leases: k8sfake.NewClientset(), poke: make(chan struct{}, 1)}
}

func (w *shardWorld) signal() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// member is one cache of the ring and what its controller-side handler
// (added through GetInformer, as controller-runtime's sources do) heard.
type member struct {
	id    string
	cache cache.Cache
	stop  func()

	mu      sync.Mutex
	seen    map[string]bool // keys added or updated
	deletes []string        // keys told deleted (OnDelete), moves included
	notes   []string        // the deletions with their time, for messages
	signal  func()          // the world's
}

// start starts member id's cache with objects as ShardOptions.Objects.
func (w *shardWorld) start(id string, objects map[client.Object]shard.Field) *member {
	t := w.t
	t.Helper()
	m := &member{id: id, seen: map[string]bool{}, signal: w.signal}
	newCache := crcache.NewWithOptions(crcache.Options{
		Shard: &crcache.ShardOptions{
			Member: shard.MemberOptions{Client: w.leases, Namespace: "ring", Ring: "cms", Identity: id,
				Slices: shardSlices, LeaseDuration: 3 * time.Second, JoinWindow: -1,
				OnChange: func(shard.Change) { w.signal() }},
			Objects: objects,
		},
		OnNewInformer: func(_ runtime.Object, inf toolscache.SharedIndexInformer) {
			_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
				AddFunc: func(any) { w.signal() }, UpdateFunc: func(_, _ any) { w.signal() }, DeleteFunc: func(any) { w.signal() },
			})
		},
	})
	c, err := newCache(fakeapi.ServeTest(t, w.srv, fakeapi.Options{}), cache.Options{Mapper: mapper()})
	if err != nil {
		t.Fatal(err)
	}
	inf, err := c.GetInformer(t.Context(), &corev1.ConfigMap{}, cache.BlockUntilSynced(false))
	if err != nil {
		t.Fatal(err)
	}
	// The cache's wait for a sync reads the informer's reflector status
	// (a lasting list error ends it): the sharded informer passes it on.
	if _, ok := inf.(interface{ Status() reflector.Status }); !ok {
		t.Errorf("%s: the sharded informer (%T) has no Status", id, inf)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { m.heard(obj, false) },
		UpdateFunc: func(_, obj any) { m.heard(obj, false) },
		DeleteFunc: func(obj any) { m.heard(obj, true) },
	}); err != nil {
		t.Fatal(err)
	}
	m.cache = c
	m.stop = runCache(t, c, id+": ")
	if !c.WaitForCacheSync(t.Context()) {
		t.Fatalf("%s: the cache did not sync", id)
	}
	return m
}

func (m *member) heard(obj any, deleted bool) {
	unknown := ""
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
		unknown = "(unknown)"
	}
	o := obj.(client.Object)
	key := o.GetNamespace() + "/" + o.GetName()
	m.mu.Lock()
	defer m.mu.Unlock()
	if deleted {
		m.deletes = append(m.deletes, key)
		m.notes = append(m.notes, key+unknown+time.Now().Format(".000"))
	} else {
		m.seen[key] = true
	}
	m.signal()
}

// cached are the ConfigMaps m's cache holds, by key.
func (m *member) cached(t *testing.T) map[string]*corev1.ConfigMap {
	t.Helper()
	var list corev1.ConfigMapList
	if err := m.cache.List(t.Context(), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]*corev1.ConfigMap{}
	for i := range list.Items {
		out[list.Items[i].Namespace+"/"+list.Items[i].Name] = &list.Items[i]
	}
	return out
}

// want maps each member of ms to the server's ConfigMaps it owns when ms
// are the ring, hashed by field.
func (w *shardWorld) want(field shard.Field, ms ...*member) map[string][]string {
	t := w.t
	t.Helper()
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.id
	}
	a, err := shard.Assign(ids, shard.Options{Slices: shardSlices})
	if err != nil {
		t.Fatal(err)
	}
	list, err := w.srv.ListerWatcher(fake.LWOptions{Resource: fake.ConfigMaps().GVR}).ListWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, id := range ids {
		match, err := a.Matcher(id, field)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = []string{}
		for _, cm := range list.(*corev1.ConfigMapList).Items {
			if match.Owns(&cm) {
				out[id] = append(out[id], cm.Namespace+"/"+cm.Name)
			}
		}
		slices.Sort(out[id])
	}
	return out
}

// converge waits until every member of ms caches exactly the ConfigMaps
// it owns with ms as the ring (and every Pod), re-checking on each event
// and Change.
func (w *shardWorld) converge(step string, field shard.Field, ms ...*member) {
	t := w.t
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		want := w.want(field, ms...)
		got := map[string][]string{}
		for _, m := range ms {
			got[m.id] = slices.Sorted(maps.Keys(m.cached(t)))
		}
		if maps.EqualFunc(got, want, slices.Equal) {
			break
		}
		select {
		case <-w.poke:
		case <-timeout:
			t.Fatalf("%s: the caches did not converge:\n got %v\nwant %v", step, got, want)
		}
	}
	for _, m := range ms {
		var pods corev1.PodList
		if err := m.cache.List(t.Context(), &pods); err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) != 4 {
			t.Fatalf("%s: %s caches %d Pods (not sharded), want all 4", step, m.id, len(pods.Items))
		}
	}
}

// Two caches of one ring over the fake apiserver: each caches only its
// slices of the ConfigMaps (Pods, not named in Objects, whole); a joining
// member takes its slices over and a leaving one releases its Lease and
// hands them back. The controller-side handler of each hears only keys
// its member owns at the time: moves are not told as deletions, a
// deletion on the server is told to its owner only.
func TestShardedCaches(t *testing.T) {
	for _, mode := range []fake.ShardSelectorMode{fake.ShardSelectorsApplied, fake.ShardSelectorsIgnored} {
		t.Run(fmt.Sprintf("mode=%d", mode), func(t *testing.T) {
			w := newShardWorld(t, mode)
			objects := map[client.Object]shard.Field{&corev1.ConfigMap{}: ""}
			m0 := w.start("m0", objects)
			w.converge("m0 alone", shard.FieldUID, m0)
			m1 := w.start("m1", objects)
			w.converge("m1 joins", shard.FieldUID, m0, m1)

			want := w.want(shard.FieldUID, m0, m1)
			if st := crcache.ShardMember(m0.cache).Status(); !slices.Equal(st.Members, []string{"m0", "m1"}) {
				t.Errorf("m0's member status: members %v, want [m0 m1]", st.Members)
			}
			if n0, n1 := len(want["m0"]), len(want["m1"]); n0 == 0 || n1 == 0 {
				t.Fatalf("a member owns nothing (%d, %d): pick another UIDSeed", n0, n1)
			}
			m1.mu.Lock()
			if got := slices.Sorted(maps.Keys(m1.seen)); !slices.Equal(got, want["m1"]) {
				t.Errorf("m1's handler heard %v, want its own keys %v", got, want["m1"])
			}
			m1.mu.Unlock()
			m0.mu.Lock()
			if len(m0.deletes) != 0 {
				t.Errorf("m0's handler was told of deletions %v: its keys moved to m1, none was deleted", m0.deletes)
			}
			m0.mu.Unlock()

			// A deletion on the server is told to its owner only.
			gone := want["m1"][0]
			ns, name, _ := toolscache.SplitMetaNamespaceKey(gone)
			if _, err := w.srv.Delete(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
				t.Fatal(err)
			}
			w.converge("a deletion", shard.FieldUID, m0, m1)
			for {
				m1.mu.Lock()
				told := slices.Contains(m1.deletes, gone)
				m1.mu.Unlock()
				if told {
					break
				}
				select {
				case <-w.poke:
				case <-time.After(30 * time.Second):
					m0.mu.Lock()
					m1.mu.Lock()
					t.Fatalf("m1's handler was not told of the deletion of %s; m1 deletes %v, m0 deletes %v", gone, m1.notes, m0.notes)
				}
			}

			// m1 leaves: its Lease is deleted and m0 takes everything back.
			m1.stop()
			if _, err := w.leases.CoordinationV1().Leases("ring").Get(t.Context(), "cms-m1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("m1's Lease after its cache stopped: error %v, want NotFound", err)
			}
			w.converge("m1 leaves", shard.FieldUID, m0)
			m0.mu.Lock()
			defer m0.mu.Unlock()
			// m0 may hear of the deletion too: the gained slices are
			// listed at its cache's resource version, before the
			// deletion, which its watch then brings. No move is told as
			// a deletion.
			for _, k := range m0.deletes {
				if k != gone {
					t.Errorf("m0's handler was told of deletions %v, want none but of %s", m0.notes, gone)
				}
			}
			for _, k := range want["m1"][1:] {
				if !m0.seen[k] {
					t.Errorf("m0's handler did not hear of %s, handed back by m1", k)
				}
			}
		})
	}
}

// Without Objects, every namespaced type but Leases is sharded by
// namespace: a namespace's ConfigMaps and Pods stay on one member.
func TestShardedCachesDefaultObjects(t *testing.T) {
	w := newShardWorld(t, fake.ShardSelectorsApplied)
	m0 := w.start("m0", nil)
	m1 := w.start("m1", nil)
	want := w.want(shard.FieldNamespace, m0, m1)
	timeout := time.After(30 * time.Second)
	for {
		ok := true
		for _, m := range []*member{m0, m1} {
			if got := slices.Sorted(maps.Keys(m.cached(t))); !slices.Equal(got, want[m.id]) {
				ok = false
			}
		}
		if ok {
			break
		}
		select {
		case <-w.poke:
		case <-timeout:
			t.Fatalf("the caches did not converge on %v", want)
		}
	}
	a := shard.MustAssign([]string{"m0", "m1"}, shard.Options{Slices: shardSlices})
	for _, m := range []*member{m0, m1} {
		var pods corev1.PodList
		if err := m.cache.List(t.Context(), &pods); err != nil {
			t.Fatal(err)
		}
		match, _ := a.Matcher(m.id, shard.FieldNamespace)
		owns := match.Owns(&metav1.ObjectMeta{Namespace: "a"})
		if got := len(pods.Items) == 4; got != owns || (!owns && len(pods.Items) != 0) {
			t.Errorf("%s caches %d of namespace a's 4 Pods; owns namespace a: %v", m.id, len(pods.Items), owns)
		}
	}
}

// Bad sharding options fail the cache's construction with the reason;
// an unsharded cache has no member.
func TestShardOptionsRefused(t *testing.T) {
	srv := fake.NewTestServer(t, fake.Options{})
	cfg := fakeapi.ServeTest(t, srv, fakeapi.Options{})
	for name, o := range map[string]crcache.ShardOptions{
		"no namespace": {Member: shard.MemberOptions{Ring: "r", Identity: "x"}},
		"bad field": {Member: shard.MemberOptions{Namespace: "n", Ring: "r", Identity: "x"},
			Objects: map[client.Object]shard.Field{&corev1.ConfigMap{}: "metadata.name"}},
	} {
		c, err := crcache.NewWithOptions(crcache.Options{Shard: &o})(cfg, cache.Options{Mapper: mapper()})
		switch {
		case err == nil:
			t.Errorf("%s: no error", name)
		case c != nil:
			t.Errorf("%s: a cache as well as the error %v", name, err)
		default:
			t.Logf("%s: %v", name, err)
		}
	}
	c, err := crcache.New(cfg, cache.Options{Mapper: mapper()})
	if err != nil {
		t.Fatal(err)
	}
	if m := crcache.ShardMember(c); m != nil {
		t.Errorf("ShardMember of an unsharded cache = %v, want nil", m)
	}
}
