package shard_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/shard"
)

// Three replicas split the hash space; pod-1's part, as a shard selector.
func ExampleAssignment_Selector() {
	a, err := shard.Assign([]string{"pod-0", "pod-1", "pod-2"}, shard.Options{Slices: 8})
	if err != nil {
		panic(err)
	}
	for s := range a.Slices() {
		fmt.Printf("slice %d: %s\n", s, a.Owner(s))
	}
	sel, ok, err := a.Selector("pod-1", shard.FieldUID)
	fmt.Println(sel, ok, err)
	// Output:
	// slice 0: pod-2
	// slice 1: pod-1
	// slice 2: pod-2
	// slice 3: pod-1
	// slice 4: pod-1
	// slice 5: pod-0
	// slice 6: pod-1
	// slice 7: pod-2
	// shardRange(object.metadata.uid, '0x2000000000000000', '0x4000000000000000') || shardRange(object.metadata.uid, '0x6000000000000000', '0xa000000000000000') || shardRange(object.metadata.uid, '0xc000000000000000', '0xe000000000000000') true <nil>
}

// A Filter keeps a replica's handler to the pods it owns: in a ring of
// two, each pod reaches exactly one replica's handler.
func ExampleFilter() {
	a := shard.MustAssign([]string{"pod-0", "pod-1"}, shard.Options{})
	var handlers []informer.Handler[*corev1.Pod]
	for _, replica := range a.Members() {
		filter, err := shard.NewFilter(shard.FieldUID)
		if err != nil {
			panic(err)
		}
		// In a controller: shard.NewMember(ctx, shard.MemberOptions{..., OnChange: filter.OnChange}).
		// Here, the first Change that replica's Member would publish:
		filter.Update(shard.Change{Member: replica, Assignment: a, Diff: shard.Diff{Gained: a.Owned(replica)}})
		handlers = append(handlers, informer.FilteringHandler[*corev1.Pod]{
			Filter: shard.FilterFunc[*corev1.Pod](filter),
			Handler: informer.HandlerFuncs[*corev1.Pod]{
				AddFunc: func(p *corev1.Pod, _ bool) { fmt.Println(replica, "reconciles", p.Name) },
			},
		})
	}
	uids := []string{ // as the API server assigns them: random
		"4dad2986-ce83-4960-aa06-e9ab85a0bcc1", "2cb85f3f-4a24-439a-9d99-8017f5e2fc57",
		"8a4996ef-b447-40ce-b484-38b5c41f9dfd", "eae0d2c1-1c33-4464-873d-212ba950666d",
		"d0b0090d-6259-4992-bfb8-1d2706e55426", "dc159e6a-409c-48f2-ab68-b48ebf13c171",
	}
	for i, uid := range uids {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), UID: types.UID(uid)}}
		for _, h := range handlers {
			h.OnAdd(pod, true)
		}
	}
	// Output:
	// pod-0 reconciles web-0
	// pod-0 reconciles web-1
	// pod-1 reconciles web-2
	// pod-0 reconciles web-3
	// pod-1 reconciles web-4
	// pod-1 reconciles web-5
}

// The pure membership core: which Leases count at an instant, and when to
// look again.
func ExampleLiveMembers() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	peers := []shard.Peer{
		{Identity: "pod-0", Renewed: t0, Duration: 15 * time.Second},
		{Identity: "pod-1", Renewed: t0.Add(-20 * time.Second), Duration: 15 * time.Second}, // lapsed
		{Identity: "pod-2", Renewed: t0.Add(-5 * time.Second), Duration: 15 * time.Second},
	}
	live, next := shard.LiveMembers(peers, t0)
	fmt.Println(live, next.Sub(t0))
	// Output:
	// [pod-0 pod-2] 10s
}

// A sharded pod informer: the Member's Changes drive the Source, which
// lists and watches only this replica's pods. A fake clientset stands in
// for the cluster, so that the example runs; this replica is alone in its
// ring and owns every pod.
func ExampleSource() {
	ctx, cancel := context.WithCancel(context.Background())
	// In a controller: kubernetes.NewForConfig with your kubeconfig.
	var clientset kubernetes.Interface = k8sfake.NewClientset(
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", UID: "4dad2986-ce83-4960-aa06-e9ab85a0bcc1"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: "2cb85f3f-4a24-439a-9d99-8017f5e2fc57"}},
	)

	src, err := shard.NewSource(ctx, shard.SourceOptions{Inner: reflector.FromClient(clientset.CoreV1().Pods(""))})
	if err != nil {
		panic(err)
	}
	member, err := shard.NewMember(ctx, shard.MemberOptions{
		Client: clientset, Namespace: "my-controller", Ring: "pods",
		Identity:   "pod-0",      // in a Deployment: empty, for the POD_NAME environment variable
		JoinWindow: -1,           // in a Deployment: 0, to see the replicas started with this one
		OnChange:   src.OnChange, // lists wait for the first Change
	})
	if err != nil {
		panic(err)
	}
	var running sync.WaitGroup
	defer running.Wait()
	defer cancel()
	running.Go(func() { _ = member.Run(ctx) }) // holds and renews this replica's Lease; deletes it when ctx ends

	inf, err := informer.New(informer.Options[*corev1.Pod]{
		Source: src, // over the fake clientset, it lists and watches (FromClient sees the fake)
	})
	if err != nil {
		panic(err)
	}
	shard.Attach(src, inf) // a reassignment relists from the cache: only gained slices are listed
	reg, err := inf.AddHandler(informer.HandlerFuncs[*corev1.Pod]{
		AddFunc: func(p *corev1.Pod, _ bool) {
			if src.Owns(p) { // a lost slice stays cached until its new owner has it
				fmt.Println("reconcile", p.Name) // in a controller: enqueue
			}
		},
		DeleteFunc: func(p *corev1.Pod, finalStateUnknown bool) {
			if finalStateUnknown && !src.Owns(p) {
				return // moved to another replica, not deleted
			}
			// deleted on the server
		},
	}, informer.HandlerOptions{})
	if err != nil {
		panic(err)
	}
	running.Go(func() { _ = inf.Run(ctx) })
	<-reg.Synced() // the handler has seen the initial list
	// Unordered output:
	// reconcile web-0
	// reconcile web-1
}
