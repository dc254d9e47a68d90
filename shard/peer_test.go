package shard

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func lease(holder string, renewed time.Time, seconds int32) *coordinationv1.Lease {
	l := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(holder),
		RenewTime:            &metav1.MicroTime{Time: renewed},
		LeaseDurationSeconds: ptr.To(seconds),
	}}
	l.Name = "ring-" + holder
	l.Namespace = ns
	l.Labels = map[string]string{RingLabel: "ring"}
	return l
}

func TestPeerFromLease(t *testing.T) {
	ok := lease("a", t0, 15)
	noHolder := ok.DeepCopy()
	noHolder.Spec.HolderIdentity = ptr.To("")
	noRenew := ok.DeepCopy()
	noRenew.Spec.RenewTime = nil
	zero := ok.DeepCopy()
	zero.Spec.LeaseDurationSeconds = ptr.To[int32](0)
	noDuration := ok.DeepCopy()
	noDuration.Spec.LeaseDurationSeconds = nil
	annotated := ok.DeepCopy()
	annotated.Annotations = map[string]string{SlicesAnnotation: "512"}
	malformed := ok.DeepCopy()
	malformed.Annotations = map[string]string{SlicesAnnotation: "lots"}
	for _, tc := range []struct {
		name string
		l    *coordinationv1.Lease
		want Peer
		ok   bool
	}{
		{"complete", ok, Peer{Identity: "a", Renewed: t0, Duration: 15 * time.Second}, true},
		{"released: no holder", noHolder, Peer{}, false},
		{"never renewed", noRenew, Peer{}, false},
		{"zero duration", zero, Peer{}, false},
		{"no duration", noDuration, Peer{}, false},
		{"slice count", annotated, Peer{Identity: "a", Renewed: t0, Duration: 15 * time.Second, Slices: 512}, true},
		{"malformed slice count", malformed, Peer{Identity: "a", Renewed: t0, Duration: 15 * time.Second}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := PeerFromLease(tc.l)
			if got != tc.want || ok != tc.ok {
				t.Errorf("PeerFromLease = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestLiveMembers(t *testing.T) {
	peers := []Peer{
		{Identity: "b", Renewed: t0, Duration: 10 * time.Second},
		{Identity: "a", Renewed: t0.Add(2 * time.Second), Duration: 10 * time.Second},
		{Identity: "a", Renewed: t0.Add(-time.Hour), Duration: 10 * time.Second}, // a stale duplicate
		{Identity: "c", Renewed: t0.Add(-20 * time.Second), Duration: 10 * time.Second},
	}
	for _, tc := range []struct {
		at   time.Duration
		live []string
		next time.Duration
	}{
		{0, []string{"a", "b"}, 10 * time.Second},
		{9 * time.Second, []string{"a", "b"}, 10 * time.Second},
		{10 * time.Second, []string{"a"}, 12 * time.Second}, // expiry == now: gone
		{12 * time.Second, nil, -1},
	} {
		live, next := LiveMembers(peers, t0.Add(tc.at))
		wantNext := time.Time{}
		if tc.next >= 0 {
			wantNext = t0.Add(tc.next)
		}
		if !slices.Equal(live, tc.live) || !next.Equal(wantNext) {
			t.Errorf("at %v: %v, next %v; want %v, next %v", tc.at, live, next, tc.live, wantNext)
		}
	}
}

func TestViewPublishesOnlyMembershipChanges(t *testing.T) {
	v := view{self: "a", slices: 64}
	peers := []Peer{{Identity: "a", Renewed: t0, Duration: 10 * time.Second}}
	c, ok, next := v.observe(peers, t0)
	if !ok || c.Previous != nil || len(c.Gained) != 64 || len(c.Lost) != 0 || !next.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("first observe: %+v %v %v", c, ok, next)
	}
	if _, ok, _ := v.observe(peers, t0.Add(time.Second)); ok {
		t.Fatal("unchanged members published a Change")
	}
	peers = append(peers, Peer{Identity: "b", Renewed: t0, Duration: 5 * time.Second})
	c, ok, next = v.observe(peers, t0.Add(time.Second))
	if !ok || len(c.Gained) != 0 || len(c.Lost) != len(c.Assignment.Owned("b")) || !next.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("b joined: %+v %v %v", c.Diff, ok, next)
	}
	c, ok, _ = v.observe(peers, t0.Add(5*time.Second)) // b lapses
	if !ok || !slices.Equal(c.Gained, c.Previous.Owned("b")) {
		t.Fatalf("b lapsed: %+v %v", c.Diff, ok)
	}
	c, ok, _ = v.observe(peers, t0.Add(10*time.Second)) // and so do we
	if !ok || len(c.Lost) != 64 || c.Assignment.Has("a") {
		t.Fatalf("own lapse: %+v %v", c.Diff, ok)
	}
}

func TestViewConflicts(t *testing.T) {
	v := view{self: "a", slices: 1024}
	peers := []Peer{
		{Identity: "a", Renewed: t0, Duration: time.Minute, Slices: 1024},
		{Identity: "b", Renewed: t0, Duration: time.Minute, Slices: 512},
		{Identity: "c", Renewed: t0, Duration: time.Minute},                            // says nothing
		{Identity: "d", Renewed: t0.Add(-time.Hour), Duration: time.Minute, Slices: 2}, // lapsed
	}
	if got := v.conflicts(peers, t0); !slices.Equal(got, []string{"b"}) {
		t.Errorf("conflicts = %v", got)
	}
}

// TestViewIncrementalEqualsAssign: whatever the steps, the view's
// assignment is the one Assign computes from scratch.
func TestViewIncrementalEqualsAssign(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	v := view{self: "m0", slices: 512}
	var live []string
	for step := range 200 {
		set := map[string]bool{}
		for _, m := range live {
			set[m] = true
		}
		for range r.IntN(incrementalLimit + 4) { // sometimes past the limit
			m := fmt.Sprintf("m%d", r.IntN(40))
			set[m] = !set[m]
		}
		var peers []Peer
		live = live[:0]
		for m, in := range set {
			if in {
				live = append(live, m)
				peers = append(peers, Peer{Identity: m, Renewed: t0, Duration: time.Minute})
			}
		}
		slices.Sort(live)
		v.observe(peers, t0)
		want := MustAssign(live, Options{Slices: 512})
		for s := range 512 {
			if v.cur.Owner(s) != want.Owner(s) {
				t.Fatalf("step %d slice %d: view %q, Assign %q", step, s, v.cur.Owner(s), want.Owner(s))
			}
		}
		if !slices.Equal(v.cur.Members(), live) {
			t.Fatalf("step %d: members %v, want %v", step, v.cur.Members(), live)
		}
	}
}

func TestSetDiff(t *testing.T) {
	j, l := setDiff([]string{"a", "c", "d"}, []string{"b", "c", "e"})
	if !slices.Equal(j, []string{"b", "e"}) || !slices.Equal(l, []string{"a", "d"}) {
		t.Errorf("setDiff = %v, %v", j, l)
	}
}
