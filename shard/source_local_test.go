package shard_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/informertest"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/shard"
)

// notes is a handler that records what it is told, by kind.
type notes struct {
	mu                    sync.Mutex
	added, deleted, moved []string
	unknown               []bool // finalStateUnknown of each deletion
}

func (n *notes) OnAdd(p *corev1.Pod, _ bool) {
	n.mu.Lock()
	n.added = append(n.added, p.Name)
	n.mu.Unlock()
}
func (n *notes) OnUpdate(_, _ *corev1.Pod) {}
func (n *notes) OnDelete(p *corev1.Pod, unknown bool) {
	n.mu.Lock()
	n.deleted, n.unknown = append(n.deleted, p.Name), append(n.unknown, unknown)
	n.mu.Unlock()
}
func (n *notes) OnMovedAway(p *corev1.Pod) {
	n.mu.Lock()
	n.moved = append(n.moved, p.Name)
	n.mu.Unlock()
}

// take returns and clears what was recorded, sorted.
func (n *notes) take() (added, deleted, moved []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	added, deleted, moved = n.added, n.deleted, n.moved
	n.added, n.deleted, n.moved, n.unknown = nil, nil, nil, nil
	for _, s := range [][]string{added, deleted, moved} {
		slices.Sort(s)
	}
	return added, deleted, moved
}

// TestSourceRelistsFromTheCache: with the Source attached to its informer,
// a reassignment asks the server only for the slices gained, at the
// cache's resource version, and drops the slices lost with no request at
// all, as moved away; the cache holds exactly the member's part after
// each. Paginated and streaming lists alike.
func TestSourceRelistsFromTheCache(t *testing.T) {
	for _, mode := range []reflector.WatchListMode{reflector.WatchListOff, reflector.WatchListForce} {
		t.Run(fmt.Sprintf("watchlist %d", mode), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				srv := fake.NewTestServer(t, fake.Options{UIDSeed: 5, ShardSelectors: fake.ShardSelectorsApplied})
				pods := createPods(ctx, t, srv, 300)
				h := &notes{}
				src, inf := attachedInformer(ctx, t, srv, informer.Options[*corev1.Pod]{
					Reflector: reflector.Config[*corev1.Pod]{WatchList: mode, PageSize: 50}}, h)
				cached := func() []string { return cachedNames(inf) }
				lists := func() (out []fake.Call) {
					for _, c := range srv.Calls() {
						if c.Verb == fake.VerbList || c.Options.SendInitialEvents != nil {
							out = append(out, c)
						}
					}
					return out
				}

				two := shard.MustAssign([]string{"a", "b"}, shard.Options{Slices: 64})
				src.Update(shard.Change{Member: "a", Assignment: two, Diff: shard.Diff{Gained: two.Owned("a")}})
				done := make(chan error, 1)
				go func() { done <- inf.Run(ctx) }()
				if err := inf.WaitForSync(ctx); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				if added, _, _ := h.take(); !slices.Equal(added, ownedBy(pods, two, "a")) {
					t.Fatalf("first sync added %d, want %d", len(added), len(ownedBy(pods, two, "a")))
				}
				before := len(lists())

				// b leaves: a lists b's slices, and only them, at the cache's RV.
				rv := inf.LastSyncResourceVersion()
				one := two.Without("b")
				src.Update(shard.Change{Member: "a", Assignment: one, Previous: two, Diff: shard.Diff{Gained: two.Owned("b")}})
				synctest.Wait()
				gainedSel, _, _ := two.Selector("b", shard.FieldUID)
				calls := lists()[before:]
				if len(calls) == 0 {
					t.Fatal("no list of the gained slices")
				}
				for i, c := range calls {
					if c.Verb != fake.VerbList || c.Options.ShardSelector != gainedSel ||
						i == 0 && (c.Options.ResourceVersion != rv || c.Options.ResourceVersionMatch != metav1.ResourceVersionMatchExact) {
						t.Fatalf("after b left, request %d: %v (shards %.60q), want a list of b's slices at exactly rv %s", i, c, c.Options.ShardSelector, rv)
					}
				}
				if added, deleted, moved := h.take(); !slices.Equal(added, ownedBy(pods, two, "b")) || len(deleted)+len(moved) != 0 {
					t.Fatalf("after b left: added %d (want %d), deleted %v, moved %v", len(added), len(ownedBy(pods, two, "b")), deleted, moved)
				}
				if got := cached(); len(got) != len(pods) {
					t.Fatalf("a caches %d, want all %d", len(got), len(pods))
				}

				// c joins: a drops c's slices without asking the server.
				before = len(lists())
				three, _ := one.With("c")
				src.Update(shard.Change{Member: "a", Assignment: three, Previous: one, Diff: shard.Diff{Lost: three.Owned("c")}})
				synctest.Wait()
				if calls := lists()[before:]; len(calls) != 0 {
					t.Fatalf("after c joined a listed: %v", calls)
				}
				if added, deleted, moved := h.take(); !slices.Equal(moved, ownedBy(pods, three, "c")) || len(added)+len(deleted) != 0 {
					t.Fatalf("after c joined: moved %d (want %d), added %v, deleted %v", len(moved), len(ownedBy(pods, three, "c")), added, deleted)
				}
				if got, want := cached(), ownedBy(pods, three, "a"); !slices.Equal(got, want) {
					t.Fatalf("a caches %d, want %d", len(got), len(want))
				}
				if st := src.Stats(); st.LocalRelists != 2 {
					t.Fatalf("Stats = %+v, want 2 local relists", st)
				}

				// The watch goes on under the new part: a change of a's pod
				// arrives, c's does not.
				for _, p := range pods[:20] {
					p = p.DeepCopy()
					p.ResourceVersion, p.Labels = "", map[string]string{"touched": "yes"}
					if _, err := srv.Update(ctx, p); err != nil {
						t.Fatal(err)
					}
				}
				synctest.Wait()
				for _, p := range pods[:20] {
					got, ok := inf.Reader().GetByKey("default/" + p.Name)
					if mine := three.OwnerOfKey(string(p.UID)) == "a"; ok != mine || mine && got.Labels["touched"] != "yes" {
						t.Fatalf("%s: cached %v (%v), owned by a %v", p.Name, ok, got, mine)
					}
				}
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// TestSourceRapidChanges: Changes in quick succession, each gaining
// slices, make relists the reflector abandons for the next one; every
// gained slice still reaches the cache, none twice, and the cache ends
// holding exactly the member's part.
func TestSourceRapidChanges(t *testing.T) {
	for _, mode := range []reflector.WatchListMode{reflector.WatchListOff, reflector.WatchListForce} {
		t.Run(fmt.Sprintf("watchlist %d", mode), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				srv := fake.NewTestServer(t, fake.Options{UIDSeed: 6, ShardSelectors: fake.ShardSelectorsApplied})
				pods := createPods(ctx, t, srv, 2000)
				src, _ := shard.NewSource(ctx, shard.SourceOptions{Inner: srv.ListerWatcher(fake.LWOptions{Resource: fake.Pods().GVR})})
				inf, _ := informer.New(informer.Options[*corev1.Pod]{Source: src,
					Reflector: reflector.Config[*corev1.Pod]{WatchList: mode, PageSize: 100}})
				shard.Attach(src, inf)
				ring := []string{"a", "b", "c", "d", "e"}
				prev := shard.MustAssign(ring, shard.Options{Slices: 64})
				src.Update(shard.Change{Member: "a", Assignment: prev})
				done := make(chan error, 1)
				go func() { done <- inf.Run(ctx) }()
				if err := inf.WaitForSync(ctx); err != nil {
					t.Fatal(err)
				}
				for _, leaver := range ring[1:] { // b, c, d, e leave, back to back
					next := prev.Without(leaver)
					src.Update(shard.Change{Member: "a", Assignment: next, Previous: prev})
					prev = next
				}
				synctest.Wait()
				if got := inf.Reader().Len(); got != len(pods) {
					t.Fatalf("a caches %d pods, want all %d", got, len(pods))
				}
				cancel()
				<-done
			})
		})
	}
}

// TestSourceLocalRelistAfterAListNotYetApplied: a relist served from the
// cache right after the reflector took the previous one, while that list
// still waits in the informer's queue at the same resource version, copies
// the cache with that list in it. (It used to copy the cache as it was
// before, and dropped the pods the previous relist had added, as deleted,
// although the member owned them: a replica of examples/sharded lost a
// ConfigMap that way after a scale-in.) A third Change meanwhile, whose
// relist the reflector starts while the second's request still runs,
// changes nothing of that.
func TestSourceLocalRelistAfterAListNotYetApplied(t *testing.T) {
	for _, mode := range []reflector.WatchListMode{reflector.WatchListOff, reflector.WatchListForce} {
		t.Run(fmt.Sprintf("watchlist %d", mode), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				srv := fake.NewTestServer(t, fake.Options{UIDSeed: 7, ShardSelectors: fake.ShardSelectorsApplied})
				pods := createPods(ctx, t, srv, 300)
				g := &informertest.HeldProcessing{}
				h := &notes{}
				src, inf := attachedInformer(ctx, t, srv, informer.Options[*corev1.Pod]{Processing: g,
					Reflector: reflector.Config[*corev1.Pod]{WatchList: mode, PageSize: 500}}, h)
				three := shard.MustAssign([]string{"a", "b", "c"}, shard.Options{Slices: 64})
				src.Update(shard.Change{Member: "a", Assignment: three})
				done := make(chan error, 1)
				go func() { done <- inf.Run(ctx) }()
				if err := inf.WaitForSync(ctx); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				h.take()

				g.Hold()
				// b leaves: a lists b's slices; the reflector takes the list
				// and watches on, but the list waits in the queue.
				two := three.Without("b")
				src.Update(shard.Change{Member: "a", Assignment: two, Previous: three})
				synctest.Wait()
				// c leaves too, then d joins: two more relists from the
				// cache, the second started while the first waits.
				one := two.Without("c")
				src.Update(shard.Change{Member: "a", Assignment: one, Previous: two})
				synctest.Wait()
				two2, _ := one.With("d")
				src.Update(shard.Change{Member: "a", Assignment: two2, Previous: one})
				synctest.Wait()
				g.Release()
				synctest.Wait()

				want := ownedBy(pods, two2, "a")
				if got := cachedNames(inf); !slices.Equal(got, want) {
					t.Fatalf("a caches %d pods, want its %d: missing %v", len(got), len(want), minusNames(want, got))
				}
				if _, deleted, _ := h.take(); len(deleted) > 0 {
					t.Fatalf("told as deleted, none of which was: %v", deleted)
				}
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// minusNames returns the names of a (sorted) not in b (sorted).
func minusNames(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			out = append(out, x)
		}
	}
	return out
}

// attachedInformer makes a Source over srv's pods and an informer over it
// with opts (its Source set here), attached (shard.Attach), h its handler.
func attachedInformer(ctx context.Context, t *testing.T, srv *fake.Server, opts informer.Options[*corev1.Pod],
	h informer.Handler[*corev1.Pod]) (*shard.Source, *informer.Informer[*corev1.Pod]) {
	t.Helper()
	src, err := shard.NewSource(ctx, shard.SourceOptions{Inner: srv.ListerWatcher(fake.LWOptions{Resource: fake.Pods().GVR})})
	if err != nil {
		t.Fatal(err)
	}
	opts.Source = src
	inf, err := informer.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	shard.Attach(src, inf)
	if _, err := inf.AddHandler(h, informer.HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	return src, inf
}
