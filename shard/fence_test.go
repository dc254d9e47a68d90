package shard

import (
	"context"
	"fmt"
	"slices"
	"sync"
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

// TestFencedViewJoin: a joiner withholds what it gains until every other
// live member announces an assignment it knows in which that member no
// longer owns the slices; the others, losing slices, hand out the rest at
// once.
func TestFencedViewJoin(t *testing.T) {
	ab := MustAssign([]string{"a", "b"}, Options{Slices: 64})
	abc := MustAssign([]string{"a", "b", "c"}, Options{Slices: 64})
	c := view{self: "c", slices: 64, fenced: true, margin: time.Second}
	peers := []Peer{
		{Identity: "a", Renewed: t0, Duration: 10 * time.Second, Assignment: ab.Fingerprint()},
		{Identity: "b", Renewed: t0, Duration: 10 * time.Second, Assignment: ab.Fingerprint()},
		{Identity: "c", Renewed: t0, Duration: 10 * time.Second},
	}
	ch, ok, next := c.observe(peers, t0)
	owned := abc.Owned("c")
	if !ok || len(ch.Gained) != 0 || !slices.Equal(ch.Withheld, owned) || len(ch.Handed()) != 0 {
		t.Fatalf("first Change of the joiner: gained %v withheld %v", ch.Gained, ch.Withheld)
	}
	if sel, ok, _ := ch.Selector(FieldUID); ok || sel != "" {
		t.Fatalf("a joiner with everything withheld has a selector %q", sel)
	}
	if m, _ := ch.Matcher(FieldUID); m.OwnsHash(sliceStart(owned[0], 64)) {
		t.Fatal("the Matcher owns a withheld slice")
	}
	// It looks again when the blockers' Leases run out, margin included.
	if !next.Equal(t0.Add(10 * time.Second)) { // c's own expiry comes first
		t.Fatalf("next = %v", next)
	}
	// a announces the new assignment: b still blocks.
	peers[0].Assignment = abc.Fingerprint()
	if ch, ok, _ := c.observe(peers, t0.Add(100*time.Millisecond)); ok {
		t.Fatalf("released while b announces the old assignment: %+v", ch.Diff)
	}
	// b too: everything is handed out, with no new assignment.
	peers[1].Assignment = abc.Fingerprint()
	ch, ok, _ = c.observe(peers, t0.Add(200*time.Millisecond))
	if !ok || !slices.Equal(ch.Gained, owned) || len(ch.Withheld) != 0 || ch.Previous != ch.Assignment {
		t.Fatalf("release: %+v withheld %v", ch.Diff, ch.Withheld)
	}
	if sel, _, _ := ch.Selector(FieldUID); sel != mustSelector(t, abc, "c") {
		t.Fatalf("selector after release %q", sel)
	}
	if _, ok, _ := c.observe(peers, t0.Add(300*time.Millisecond)); ok {
		t.Fatal("nothing changed, yet a Change")
	}

	// The members that lose slices to c hand out the rest at once.
	a := view{self: "a", slices: 64, fenced: true, margin: time.Second}
	peers[0].Assignment, peers[1].Assignment = "", ab.Fingerprint()
	a.observe(peers[:2], t0)
	ch, ok, _ = a.observe(peers[:2], t0)
	if ok || len(a.handed) != len(ab.Owned("a")) {
		t.Fatalf("a before c: handed %d of %d (%v)", len(a.handed), len(ab.Owned("a")), ch.Diff)
	}
	ch, ok, _ = a.observe(peers, t0.Add(time.Second))
	if !ok || len(ch.Gained) != 0 || !slices.Equal(ch.Lost, minus(ab.Owned("a"), abc.Owned("a"))) || len(ch.Withheld) != 0 {
		t.Fatalf("a sees c join: %+v withheld %v", ch.Diff, ch.Withheld)
	}
}

func mustSelector(t *testing.T, a *Assignment, m string) string {
	t.Helper()
	s, _, err := a.Selector(m, FieldUID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFencedViewCrash: the slices of a member that stopped renewing are
// handed out only once its Lease has been expired for the margin, not at
// its expiry; a graceful leave (the Lease deleted) releases at once.
func TestFencedViewCrash(t *testing.T) {
	abc := MustAssign([]string{"a", "b", "c"}, Options{Slices: 64})
	ab := MustAssign([]string{"a", "b"}, Options{Slices: 64})
	fp := abc.Fingerprint()
	a := view{self: "a", slices: 64, fenced: true, margin: 2 * time.Second}
	a.remember(abc)
	peers := []Peer{
		{Identity: "a", Renewed: t0.Add(time.Hour), Duration: 10 * time.Second, Assignment: fp},
		{Identity: "b", Renewed: t0.Add(time.Hour), Duration: 10 * time.Second, Assignment: fp},
		{Identity: "c", Renewed: t0, Duration: 10 * time.Second, Assignment: fp}, // c stops renewing at t0
	}
	ch, ok, next := a.observe(peers, t0)
	if !ok || !slices.Equal(ch.Gained, abc.Owned("a")) || !next.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("start: %+v next %v", ch.Diff, next)
	}
	// c expires: a owns c's share now, but withholds it for the margin.
	ch, ok, next = a.observe(peers, t0.Add(10*time.Second))
	gained := minus(ab.Owned("a"), abc.Owned("a"))
	if !ok || len(ch.Gained) != 0 || !slices.Equal(ch.Withheld, gained) || !ch.Assignment.Equal(ab) {
		t.Fatalf("at c's expiry: %+v withheld %v", ch.Diff, ch.Withheld)
	}
	if !next.Equal(t0.Add(12 * time.Second)) {
		t.Fatalf("next = %v, want c's expiry plus the margin", next)
	}
	if _, ok, _ := a.observe(peers, t0.Add(11*time.Second)); ok {
		t.Fatal("released within the margin")
	}
	ch, ok, _ = a.observe(peers, t0.Add(12*time.Second))
	if !ok || !slices.Equal(ch.Gained, gained) || len(ch.Withheld) != 0 {
		t.Fatalf("after the margin: %+v withheld %v", ch.Diff, ch.Withheld)
	}

	// b leaves gracefully: its Lease is gone, a takes its share at once.
	ch, ok, _ = a.observe(peers[:1], t0.Add(13*time.Second))
	if !ok || !slices.Equal(ch.Gained, ab.Owned("b")) || len(ch.Withheld) != 0 {
		t.Fatalf("b's Lease deleted: %+v withheld %v", ch.Diff, ch.Withheld)
	}
	// And a leaves: it loses all it handed out.
	ch, ok = a.leaving()
	if !ok || len(ch.Lost) != 64 || ch.Assignment.Has("a") {
		t.Fatalf("leaving: %+v", ch.Diff)
	}
}

// handedLog checks at every Change of any member that no slice is handed
// out by two members at once ("at most one owner").
type handedLog struct {
	mu     sync.Mutex
	handed map[string][]int
	errs   []string
	recs   map[string]*recorder
}

func (h *handedLog) onChange(id string) func(Change) {
	rec := &recorder{}
	h.recs[id] = rec
	return func(c Change) {
		rec.add(c)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.handed[id] = c.Handed()
		seen := map[int]string{}
		for m, ss := range h.handed {
			for _, s := range ss {
				if o, ok := seen[s]; ok {
					h.errs = append(h.errs, fmt.Sprintf("slice %d handed out by %s and %s", s, o, m))
				}
				seen[s] = m
			}
		}
	}
}

func (h *handedLog) total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, ss := range h.handed {
		n += len(ss)
	}
	return n
}

// TestFencedMembers runs fenced Members on the fake clientset and a fake
// clock through a join, a crash and a graceful leave: no slice is ever
// handed out by two members at once; the joiner gets its slices once the
// others have announced the new assignment, and a crashed member's slices
// move only at its Lease's expiry plus the margin.
func TestFencedMembers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset()
		clk := clocktesting.NewFakeClock(t0)
		h := &handedLog{handed: map[string][]int{}, recs: map[string]*recorder{}}
		fenced := func(id string) func(*MemberOptions) {
			return func(o *MemberOptions) {
				o.Fenced, o.SkewMargin, o.OnChange = true, 2*time.Second, h.onChange(id)
			}
		}
		a := startMember(t, cs, clk, "a", fenced("a"))
		synctest.Wait()
		if n := h.total(); n != 64 {
			t.Fatalf("a alone hands out %d slices", n)
		}
		b := startMember(t, cs, clk, "b", fenced("b"))
		synctest.Wait()
		ab := MustAssign([]string{"a", "b"}, Options{Slices: 64})
		if n := h.total(); n != 64 || len(b.m.current.Load().Owned("b")) == 0 {
			t.Fatalf("after b joins: %d slices handed out", n)
		}
		if got := h.recs["b"].last(t).Handed(); !slices.Equal(got, ab.Owned("b")) {
			t.Fatalf("b hands out %v, owns %v", got, ab.Owned("b"))
		}
		if st := b.m.Status(); st.Withheld != 0 || st.Owned != len(ab.Owned("b")) {
			t.Fatalf("b's status: %+v", st)
		}
		// b withheld its share until a announced the new assignment,
		// unless a had announced it before b's first evaluation.
		if cs := h.recs["b"].all(); len(cs) > 1 && (len(cs[0].Withheld) == 0 || len(cs[0].Handed()) != 0) {
			t.Fatalf("b's first Change: handed %v, withheld %v", cs[0].Handed(), cs[0].Withheld)
		}

		// c joins and crashes: its Lease stays; we stop its Run without
		// letting it release (a fake Lease renewed once, then never).
		c := lease("c", clk.Now(), 15)
		c.Annotations = map[string]string{AssignmentAnnotation: MustAssign([]string{"a", "b", "c"}, Options{Slices: 64}).Fingerprint()}
		if _, err := cs.CoordinationV1().Leases(ns).Create(t.Context(), c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		abc := MustAssign([]string{"a", "b", "c"}, Options{Slices: 64})
		if n := h.total(); n != 64-len(abc.Owned("c")) {
			t.Fatalf("with c (who hands out its own): %d slices handed out by a and b", n)
		}
		// Renew a and b past c's expiry (15 s), then the margin (2 s).
		for range 3 {
			step(clk, 5*time.Second)
		}
		if n := h.total(); n != 64-len(abc.Owned("c")) {
			t.Fatalf("at c's expiry: %d slices handed out", n)
		}
		if st := a.m.Status(); st.Withheld == 0 && len(minus(ab.Owned("a"), abc.Owned("a"))) > 0 {
			t.Fatalf("a withholds nothing at c's expiry: %+v", st)
		}
		step(clk, 2*time.Second)
		if n := h.total(); n != 64 {
			t.Fatalf("after c's expiry plus the margin: %d slices handed out", n)
		}

		// b leaves gracefully: a takes everything at once.
		b.stop(t)
		synctest.Wait()
		if n := h.total(); n != 64 || len(h.handed["a"]) != 64 {
			t.Fatalf("after b left: a hands out %d", len(h.handed["a"]))
		}
		a.stop(t)
		h.mu.Lock()
		defer h.mu.Unlock()
		if len(h.errs) > 0 {
			t.Fatalf("two owners at once: %v", h.errs)
		}
	})
}

// TestMemberReleasesAfterACutShortRenewal: a renewal that fails because
// Run is ending (its context cancelled mid-write) does not make the member
// forget its Lease: leave still deletes it, so the others need not wait
// for it to expire.
func TestMemberReleasesAfterACutShortRenewal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset()
		clk := clocktesting.NewFakeClock(t0)
		a := startMember(t, cs, clk, "a", nil)
		synctest.Wait()
		cs.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
			a.cancel() // Run ends during this write
			return true, nil, context.Canceled
		})
		step(clk, 5*time.Second)
		if err := <-a.done; err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoordinationV1().Leases(ns).Get(t.Context(), "ring-a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("the Lease survived Run: %v", err)
		}
	})
}
