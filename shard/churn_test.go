package shard_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/shard"
)

// churnReplica is one replica of a sharded controller: Member, Source,
// informer, and the state its handler built (key → resource version).
type churnReplica struct {
	id     string
	member *shard.Member
	src    *shard.Source
	stop   context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	seen map[string]string
}

// TestShardedChurn: three replicas of a sharded controller (Members on
// Leases, Sources attached to informers over listwatch's fake apiserver)
// under a steady churn of creates, updates and deletes; one replica
// leaves, another joins, two more join, three leave one after the other;
// fenced and not. At the end every pod on the server is held by exactly
// one replica, its owner, at its latest resource version, and no replica
// holds a deleted pod: no change was lost across the handovers.
func TestShardedChurn(t *testing.T) {
	for _, fenced := range []bool{false, true} {
		t.Run(fmt.Sprintf("fenced=%v", fenced), func(t *testing.T) { testShardedChurn(t, fenced) })
	}
}

func testShardedChurn(t *testing.T, fenced bool) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		srv, err := fake.NewServer(fake.Options{ShardSelectors: fake.ShardSelectorsApplied})
		if err != nil {
			t.Fatal(err)
		}
		leases := k8sfake.NewClientset()
		changed := make(chan struct{}, 1)
		poke := func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
		start := func(id string) *churnReplica {
			r := &churnReplica{id: id, done: make(chan struct{}), seen: map[string]string{}}
			r.src, err = shard.NewSource(ctx, shard.SourceOptions{Inner: srv.ListerWatcher(fake.LWOptions{Resource: fake.Pods().GVR}),
				Field: shard.FieldNamespace})
			if err != nil {
				t.Fatal(err)
			}
			r.member, err = shard.NewMember(ctx, shard.MemberOptions{Client: leases, Namespace: "ring", Ring: "pods",
				Identity: id, Slices: 64, JoinWindow: 500 * time.Millisecond, Fenced: fenced, OnChange: func(c shard.Change) {
					r.src.Update(c)
					poke()
				}})
			if err != nil {
				t.Fatal(err)
			}
			inf, err := informer.New(informer.Options[*corev1.Pod]{Source: r.src})
			if err != nil {
				t.Fatal(err)
			}
			shard.Attach(r.src, inf)
			set := func(p *corev1.Pod) {
				r.mu.Lock()
				r.seen[p.Name] = p.ResourceVersion
				r.mu.Unlock()
				poke()
			}
			if _, err := inf.AddHandler(informer.HandlerFuncs[*corev1.Pod]{
				AddFunc:    func(p *corev1.Pod, _ bool) { set(p) },
				UpdateFunc: func(_, p *corev1.Pod) { set(p) },
				DeleteFunc: func(p *corev1.Pod, _ bool) {
					r.mu.Lock()
					delete(r.seen, p.Name)
					r.mu.Unlock()
					poke()
				},
			}, informer.HandlerOptions{}); err != nil {
				t.Fatal(err)
			}
			rctx, cancel := context.WithCancel(ctx)
			r.stop = cancel
			var wg sync.WaitGroup
			wg.Go(func() {
				if err := inf.Run(rctx); err != nil {
					t.Error(err)
				}
			})
			wg.Go(func() {
				if err := r.member.Run(rctx); err != nil {
					t.Error(err)
				}
			})
			go func() { wg.Wait(); close(r.done) }()
			return r
		}
		reps := []*churnReplica{start("r0"), start("r1"), start("r2")}

		// Each pod in a namespace of its own, named at random, sharded by
		// namespace: the fake server's uids are sequential, and FNV-1a
		// would put sequential keys in a few slices (docs/sharding.md).
		rng := rand.New(rand.NewPCG(41, 42))
		type key struct{ ns, name string }
		var live []key
		next := 0
		tick := time.NewTicker(20 * time.Millisecond) // the churn's own pace, on the bubble's clock
		defer tick.Stop()
		stop := func(id string) {
			i := slices.IndexFunc(reps, func(r *churnReplica) bool { return r.id == id })
			reps[i].stop()
			<-reps[i].done
			reps = slices.Delete(reps, i, i+1)
		}
		for step := range 750 {
			<-tick.C
			switch step {
			case 150: // r2 leaves gracefully
				stop("r2")
			case 300: // r3 joins
				reps = append(reps, start("r3"))
			case 450: // r4 and r5 join
				reps = append(reps, start("r4"), start("r5"))
			case 600: // r0, r3 and r4 leave, one after the other
				for _, id := range []string{"r0", "r3", "r4"} {
					stop(id)
				}
			}
			switch op := rng.IntN(10); {
			case op < 4 || len(live) == 0:
				k := key{ns: fmt.Sprintf("ns-%08x", rng.Uint32()), name: fmt.Sprintf("pod-%04d", next)}
				next++
				if _, err := srv.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: k.name}}); err != nil {
					t.Fatal(err)
				}
				live = append(live, k)
			case op < 8:
				k := live[rng.IntN(len(live))]
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: k.name,
					Labels: map[string]string{"step": fmt.Sprint(step)}}}
				if _, err := srv.Update(ctx, p); err != nil {
					t.Fatal(err)
				}
			default:
				i := rng.IntN(len(live))
				if _, err := srv.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: live[i].ns, Name: live[i].name}}); err != nil {
					t.Fatal(err)
				}
				live = append(live[:i], live[i+1:]...)
			}
		}

		// The server's final state, and who must hold what.
		lw := srv.ListerWatcher(fake.LWOptions{Resource: fake.Pods().GVR})
		obj, err := lw.ListWithContext(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]*corev1.Pod{}
		for i := range obj.(*corev1.PodList).Items {
			p := &obj.(*corev1.PodList).Items[i]
			want[p.Name] = p
		}
		converged := func() string {
			var held int
			for _, r := range reps {
				a := r.member.Assignment()
				if a == nil || len(a.Members()) != len(reps) {
					return fmt.Sprintf("%s sees %v", r.id, a)
				}
				r.mu.Lock()
				for name, rv := range r.seen {
					p, ok := want[name]
					if !ok {
						r.mu.Unlock()
						return fmt.Sprintf("%s holds deleted %s", r.id, name)
					}
					if owner := a.OwnerOfKey(p.Namespace); owner != r.id || rv != p.ResourceVersion {
						r.mu.Unlock()
						return fmt.Sprintf("%s holds %s at %s; owner %s, rv %s", r.id, name, rv, owner, p.ResourceVersion)
					}
				}
				held += len(r.seen)
				r.mu.Unlock()
			}
			if held != len(want) {
				return fmt.Sprintf("%d of %d pods held", held, len(want))
			}
			return ""
		}
		deadline := time.After(time.Minute)
		for why := converged(); why != ""; why = converged() {
			select {
			case <-changed:
			case <-deadline:
				t.Fatalf("not converged after a minute: %s", why)
			}
		}
		for _, r := range reps {
			r.mu.Lock()
			t.Logf("%s holds %d of %d pods; source %+v", r.id, len(r.seen), len(want), r.src.Stats())
			r.mu.Unlock()
		}
		for _, r := range reps {
			r.stop()
			<-r.done
		}
	})
}
