package deltafifo_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/deltafifo"
)

func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
}

// A coalescing FIFO: each key's changes are handed over together.
func Example() {
	ctx := context.Background()
	f := deltafifo.New(ctx, deltafifo.Options[*corev1.Pod]{})
	defer f.Close()

	_ = f.Replace([]*corev1.Pod{pod("a", "1"), pod("b", "1")}, "1") // initial list
	_ = f.Update(pod("a", "2"))
	_ = f.Delete(pod("b", "3"))

	print := func(key string, deltas []deltafifo.Delta[*corev1.Pod], initial bool) error {
		fmt.Println(key, "initial:", initial)
		for _, d := range deltas {
			fmt.Println("  ", d.Type, d.Object.ResourceVersion)
		}
		return nil
	}
	for f.Len() > 0 {
		_ = f.Pop(ctx, print)
	}
	fmt.Println("synced:", f.HasSynced())
	// Output:
	// default/a initial: true
	//    Replaced 1
	//    Updated 2
	// default/b initial: true
	//    Replaced 1
	//    Deleted 3
	// synced: true
}

// In-order mode delivers every event on its own, in arrival order. A relist
// that no longer contains an object yields a deletion whose final state is
// unknown, typed as *corev1.Pod rather than wrapped in a tombstone.
func Example_inOrder() {
	ctx := context.Background()
	f := deltafifo.New(ctx, deltafifo.Options[*corev1.Pod]{InOrder: true})
	defer f.Close()

	_ = f.Add(pod("a", "1"))
	_ = f.Update(pod("a", "2"))
	_ = f.Replace(nil, "3") // "a" is gone

	for f.Len() > 0 {
		_ = f.Pop(ctx, func(key string, deltas []deltafifo.Delta[*corev1.Pod], _ bool) error {
			d := deltas[0]
			fmt.Println(key, d.Type, d.Object.ResourceVersion, "final state unknown:", d.FinalStateUnknown)
			return nil
		})
	}
	// Output:
	// default/a Added 1 final state unknown: false
	// default/a Updated 2 final state unknown: false
	// default/a Deleted 2 final state unknown: true
}
