package shard_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/shard"
)

// gated holds every list back until open is closed: a replica whose list
// of the slices it gained reaches the server late.
type gated struct {
	cache.ListerWatcherWithContext
	open chan struct{}
}

func (g gated) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.ListerWatcherWithContext.ListWithContext(ctx, opts)
}

func (g gated) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.ListerWatcherWithContext.WatchWithContext(ctx, opts)
}

// replica is a Member, an attached Source and an informer, with what its
// handler was told.
type replica struct {
	member *shard.Member
	src    *shard.Source
	inf    *informer.Informer[*corev1.Pod]
	notes  *notes
	done   chan struct{}
}

func startReplica(ctx context.Context, t *testing.T, leases *k8sfake.Clientset, id string, lw cache.ListerWatcherWithContext) *replica {
	t.Helper()
	r := &replica{notes: &notes{}, done: make(chan struct{})}
	var err error
	if r.src, err = shard.NewSource(ctx, shard.SourceOptions{Inner: lw}); err != nil {
		t.Fatal(err)
	}
	if r.member, err = shard.NewMember(ctx, shard.MemberOptions{Client: leases, Namespace: "ring", Ring: "pods",
		Identity: id, Slices: 64, JoinWindow: -1, OnChange: r.src.OnChange}); err != nil {
		t.Fatal(err)
	}
	if r.inf, err = informer.New(informer.Options[*corev1.Pod]{Source: r.src,
		Reflector: reflector.Config[*corev1.Pod]{WatchList: reflector.WatchListOff}}); err != nil {
		t.Fatal(err)
	}
	shard.Attach(r.src, r.inf)
	if _, err := r.inf.AddHandler(r.notes, informer.HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { _ = r.inf.Run(ctx) })
	wg.Go(func() { _ = r.member.Run(ctx) })
	go func() { wg.Wait(); close(r.done) }()
	return r
}

// TestDeleteDuringHandover: a pod deleted while its slice moves from a to
// a joining b, after a handed it over and before b listed it, is told as
// a deletion, by a; the other moved pods reach a's handler as moved away
// and b's as added. a keeps the slices it lost, watched, until b
// announces on its Lease that it has listed them; then a drops them from
// its cache without asking the server once its watch has caught up with
// b's list, or, when its watch lags (stalled here) for a second, after
// confirming with the server which of them still exist.
func TestDeleteDuringHandover(t *testing.T) {
	for _, stalled := range []bool{false, true} {
		t.Run(fmt.Sprintf("a's watch stalled: %v", stalled), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				srv := fake.NewTestServer(t, fake.Options{UIDSeed: 9, ShardSelectors: fake.ShardSelectorsApplied})
				pods := createPods(ctx, t, srv, 100)
				leases := k8sfake.NewClientset()
				lw := srv.ListerWatcher(fake.LWOptions{Resource: fake.Pods().GVR})
				a := startReplica(ctx, t, leases, "a", lw)
				if err := a.inf.WaitForSync(ctx); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				if added, _, _ := a.notes.take(); len(added) != len(pods) {
					t.Fatalf("a alone added %d pods, want %d", len(added), len(pods))
				}

				// b joins; its lists reach the server only once opened.
				two := shard.MustAssign([]string{"a", "b"}, shard.Options{Slices: 64})
				var moving []string
				var victim *corev1.Pod
				for _, p := range pods {
					if two.OwnerOfKey(string(p.UID)) == "b" {
						moving = append(moving, p.Name)
						if victim == nil {
							victim = p
						}
					}
				}
				if stalled {
					srv.Stall(fake.Pods().GVR)
				}
				open := make(chan struct{})
				b := startReplica(ctx, t, leases, "b", gated{lw, open})
				synctest.Wait()
				if c := a.member.Assignment(); c == nil || len(c.Members()) != 2 {
					t.Fatalf("a sees %v", c)
				}
				if a.src.Owns(victim) {
					t.Fatal("a still owns the victim after b joined")
				}
				if _, deleted, moved := a.notes.take(); len(deleted)+len(moved) != 0 {
					t.Fatalf("a dropped %v %v before b listed", deleted, moved)
				}

				// The race: the victim is deleted after a handed its slice
				// over, before b lists.
				if _, err := srv.Delete(ctx, victim); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				close(open)
				synctest.Wait()
				if stalled {
					// a's watch never catches up with b's list: after a
					// while a asks the server what is left.
					time.Sleep(2 * time.Second)
					synctest.Wait()
					srv.Unstall(fake.Pods().GVR)
					synctest.Wait()
				}

				added, _, _ := b.notes.take()
				wantAdded := slices.DeleteFunc(slices.Clone(moving), func(n string) bool { return n == victim.Name })
				if !slices.Equal(added, wantAdded) {
					t.Fatalf("b added %d pods, want the %d moved but the victim", len(added), len(wantAdded))
				}
				a.notes.mu.Lock()
				unknown := slices.Clone(a.notes.unknown)
				a.notes.mu.Unlock()
				_, deleted, moved := a.notes.take()
				// a's watch tells the deletion; with it stalled, the
				// confirmation does (a relist's deletion, which Owns
				// says is a's).
				if len(unknown) != 1 || unknown[0] != stalled {
					t.Fatalf("a's deletion finalStateUnknown %v, want %v", unknown, stalled)
				}
				if !slices.Equal(deleted, []string{victim.Name}) || !slices.Equal(moved, wantAdded) {
					t.Fatalf("a: deleted %v (want the victim %s), moved %d (want %d)", deleted, victim.Name, len(moved), len(wantAdded))
				}
				st := a.src.Stats()
				if stalled != (st.ConfirmLists == 1 && st.HandoverDeletions == 1) || !stalled && st.ConfirmLists != 0 {
					t.Fatalf("a's source: %+v", st)
				}
				for _, r := range []*replica{a, b} {
					for _, p := range r.inf.Reader().List() {
						if two.OwnerOfKey(string(p.UID)) != r.member.Identity() {
							t.Errorf("%s still caches %s, owned by %s", r.member.Identity(), p.Name, two.OwnerOfKey(string(p.UID)))
						}
					}
				}
				cancel()
				<-a.done
				<-b.done
			})
		})
	}
}
