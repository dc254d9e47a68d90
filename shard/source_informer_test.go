package shard_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/shard"
)

// event is one handler call the test saw.
type event struct {
	kind  string // add or delete
	name  string
	moved bool // a delete of an object the member no longer owns
}

// TestSourceDrivesAnInformer: a listwatch informer over a shard.Source on
// listwatch's fake apiserver (which ignores shard selectors by default: the
// client filters) caches only the member's pods; a reassignment relists, adds the
// gained pods and deletes the lost ones, which Owns tells apart as moved.
func TestSourceDrivesAnInformer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := fake.NewServer(fake.Options{UIDSeed: 31})
		if err != nil {
			t.Fatal(err)
		}
		pods := createPods(t.Context(), t, srv, 60)
		src, err := shard.NewSource(t.Context(), shard.SourceOptions{Inner: srv.ListerWatcher(fake.LWOptions{Resource: fake.Pods().GVR})})
		if err != nil {
			t.Fatal(err)
		}
		two := shard.MustAssign([]string{"a", "b"}, shard.Options{Slices: 64})
		src.Update(shard.Change{Member: "a", Assignment: two})

		inf, err := informer.New(informer.Options[*corev1.Pod]{Source: src})
		if err != nil {
			t.Fatal(err)
		}
		events := make(chan event, 200)
		if _, err := inf.AddHandler(informer.HandlerFuncs[*corev1.Pod]{
			AddFunc: func(p *corev1.Pod, _ bool) { events <- event{kind: "add", name: p.Name} },
			DeleteFunc: func(p *corev1.Pod, _ bool) {
				events <- event{kind: "delete", name: p.Name, moved: !src.Owns(p)}
			},
		}, informer.HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- inf.Run(ctx) }()
		if err := inf.WaitForSync(ctx); err != nil {
			t.Fatal(err)
		}
		cached := func() []string { return cachedNames(inf) }
		expect := func(n int) (adds, moved []string) {
			for range n {
				e := <-events
				switch {
				case e.kind == "add":
					adds = append(adds, e.name)
				case e.moved:
					moved = append(moved, e.name)
				default:
					t.Fatalf("delete of %s, which a still owns", e.name)
				}
			}
			slices.Sort(adds)
			slices.Sort(moved)
			return adds, moved
		}
		want := ownedBy(pods, two, "a")
		if adds, _ := expect(len(want)); !slices.Equal(adds, want) || !slices.Equal(cached(), want) {
			t.Fatalf("first sync: added %v, cached %v, want %v", adds, cached(), want)
		}

		// b leaves: a takes everything.
		one := two.Without("b")
		src.Update(shard.Change{Member: "a", Assignment: one, Previous: two})
		gained := ownedBy(pods, two, "b")
		if adds, _ := expect(len(gained)); !slices.Equal(adds, gained) {
			t.Fatalf("after b left: added %v, want %v", adds, gained)
		}
		if got := cached(); len(got) != len(pods) {
			t.Fatalf("a caches %d pods, want all %d", len(got), len(pods))
		}

		// c joins: a hands c's pods over.
		three, _ := one.With("c")
		src.Update(shard.Change{Member: "a", Assignment: three, Previous: one})
		lost := ownedBy(pods, three, "c")
		if _, moved := expect(len(lost)); !slices.Equal(moved, lost) {
			t.Fatalf("after c joined: moved away %v, want %v", moved, lost)
		}
		if got, want := cached(), ownedBy(pods, three, "a"); !slices.Equal(got, want) {
			t.Fatalf("a caches %v, want %v", got, want)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
