package shard

import (
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestCollectable(t *testing.T) {
	p := Peer{Identity: "x", Renewed: t0, Duration: 10 * time.Second}
	for _, tc := range []struct {
		at   time.Duration
		want bool
	}{{5 * time.Second, false}, {69 * time.Second, false}, {70 * time.Second, true}, {time.Hour, true}} {
		if got := collectable(p, t0.Add(tc.at), time.Minute); got != tc.want {
			t.Errorf("at %v: %v", tc.at, got)
		}
	}
}

// TestStaleLeasesCollected: a Lease expired for longer than CollectAfter is
// deleted, by one member only (the owner of slice 0); live ones stay.
func TestStaleLeasesCollected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset(lease("ghost", t0.Add(-time.Hour), 15))
		deletes := make(chan string, 10)
		cs.PrependReactor("delete", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
			deletes <- a.(k8stesting.DeleteAction).GetName()
			return false, nil, nil
		})
		clk := clocktesting.NewFakeClock(t0)
		collect := func(o *MemberOptions) { o.CollectAfter = 30 * time.Second }
		a := startMember(t, cs, clk, "a", collect)
		b := startMember(t, cs, clk, "b", collect)
		synctest.Wait()
		step(clk, 5*time.Second) // a renewal: the collector collects
		if got := <-deletes; got != "ring-ghost" {
			t.Fatalf("deleted %q", got)
		}
		step(clk, 5*time.Second)
		if len(deletes) != 0 {
			t.Fatalf("%d more deletes", len(deletes))
		}
		if _, err := cs.CoordinationV1().Leases(ns).Get(t.Context(), "ring-ghost", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("ghost Lease: %v", err)
		}
		for _, name := range []string{"ring-a", "ring-b"} {
			getLease(t, cs, name) // live ones stay
		}
		a.stop(t)
		b.stop(t)
	})
}
