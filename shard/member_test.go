package shard

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
)

const ns = "ring-ns"

// recorder keeps the Changes a member published.
type recorder struct {
	mu      sync.Mutex
	changes []Change
}

func (r *recorder) add(c Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, c)
}

func (r *recorder) all() []Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.changes)
}

func (r *recorder) last(t *testing.T) Change {
	t.Helper()
	cs := r.all()
	if len(cs) == 0 {
		t.Fatal("no Change published")
	}
	return cs[len(cs)-1]
}

// running is a Member started by startMember.
type running struct {
	m      *Member
	rec    *recorder
	cancel context.CancelFunc
	done   chan error
}

// stop cancels the member and waits for Run to return.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	if err := <-r.done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func startMember(t *testing.T, cs kubernetes.Interface, clk *clocktesting.FakeClock, id string, mod func(*MemberOptions)) *running {
	t.Helper()
	rec := &recorder{}
	opts := MemberOptions{Client: cs, Namespace: ns, Ring: "ring", Identity: id, Slices: 64,
		LeaseDuration: 15 * time.Second, Clock: clk, OnChange: rec.add, JoinWindow: -1}
	if mod != nil {
		mod(&opts)
	}
	ctx := klog.NewContext(t.Context(), ktesting.NewLogger(t, ktesting.NewConfig()))
	m, err := NewMember(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &running{m: m, rec: rec, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- m.Run(ctx) }()
	return r
}

func getLease(t *testing.T, cs kubernetes.Interface, name string) *coordinationv1.Lease {
	t.Helper()
	l, err := cs.CoordinationV1().Leases(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// step advances the fake clock and lets every goroutine settle.
func step(clk *clocktesting.FakeClock, d time.Duration) {
	clk.Step(d)
	synctest.Wait()
}

func TestMemberJoinsRenewsAndReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset()
		clk := clocktesting.NewFakeClock(t0)
		a := startMember(t, cs, clk, "a", nil)
		synctest.Wait()

		l := getLease(t, cs, "ring-a")
		if l.Labels[RingLabel] != "ring" || l.Annotations[SlicesAnnotation] != "64" ||
			*l.Spec.HolderIdentity != "a" || *l.Spec.LeaseDurationSeconds != 15 || !l.Spec.RenewTime.Time.Equal(t0) {
			t.Fatalf("Lease as written: %+v", l)
		}
		c := a.rec.last(t)
		if c.Previous != nil || len(c.Gained) != 64 || !slices.Equal(c.Assignment.Members(), []string{"a"}) {
			t.Fatalf("first Change: %+v", c)
		}
		if a.m.Assignment() != c.Assignment {
			t.Fatal("Assignment() is not the published one")
		}

		step(clk, 5*time.Second) // RenewInterval = 15s/3
		if got := getLease(t, cs, "ring-a").Spec.RenewTime.Time; !got.Equal(t0.Add(5 * time.Second)) {
			t.Fatalf("renewTime after one interval = %v", got)
		}
		if n := len(a.rec.all()); n != 1 {
			t.Fatalf("a renewal published %d Changes", n)
		}
		st := a.m.Status()
		if !st.Synced || st.Owned != 64 || st.RenewError != nil || !st.Renewed.Equal(t0.Add(5*time.Second)) {
			t.Fatalf("Status = %+v", st)
		}

		a.stop(t)
		c = a.rec.last(t)
		if len(c.Lost) != 64 || c.Assignment.Has("a") {
			t.Fatalf("last Change: %+v", c.Diff)
		}
		if _, err := cs.CoordinationV1().Leases(ns).Get(t.Context(), "ring-a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("Lease after Run: %v", err)
		}
	})
}

// TestMembersAgreeAndTakeOver: two members reach one assignment; when one
// leaves, the other takes its slices as soon as the Lease is deleted.
func TestMembersAgreeAndTakeOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset()
		clk := clocktesting.NewFakeClock(t0)
		a := startMember(t, cs, clk, "a", nil)
		synctest.Wait()
		b := startMember(t, cs, clk, "b", nil)
		synctest.Wait()

		ca, cb := a.rec.last(t), b.rec.last(t)
		if !ca.Assignment.Equal(cb.Assignment) || !slices.Equal(ca.Assignment.Members(), []string{"a", "b"}) {
			t.Fatalf("a sees %v, b sees %v", ca.Assignment, cb.Assignment)
		}
		if !slices.Equal(ca.Lost, cb.Assignment.Owned("b")) {
			t.Fatalf("a lost %v, b owns %v", ca.Lost, cb.Assignment.Owned("b"))
		}
		owned := cb.Assignment.Owned("b")

		// b announced its first assignment at once, a announces the new
		// one at its next renewal; then both see that the ring agrees.
		if b.m.Status().Agreed {
			t.Fatal("b agrees before a announced the new assignment")
		}
		step(clk, 5*time.Second)
		sa, sb := a.m.Status(), b.m.Status()
		if !sa.Agreed || !sb.Agreed || sa.Fingerprint != sb.Fingerprint || sa.Fingerprint != ca.Assignment.Fingerprint() {
			t.Fatalf("after the renewals: a %v %s, b %v %s", sa.Agreed, sa.Fingerprint, sb.Agreed, sb.Fingerprint)
		}
		if got := getLease(t, cs, "ring-b").Annotations[AssignmentAnnotation]; got != sb.Fingerprint {
			t.Fatalf("b's Lease announces %q", got)
		}

		b.stop(t)
		synctest.Wait()
		ca = a.rec.last(t)
		if !slices.Equal(ca.Assignment.Members(), []string{"a"}) || !slices.Equal(ca.Gained, owned) {
			t.Fatalf("after b left, a: %v gained %v, want %v", ca.Assignment, ca.Gained, owned)
		}
		if !a.m.Status().Agreed {
			t.Fatal("a alone does not agree with itself")
		}
		a.stop(t)
	})
}

// TestLapsedLeaseExpires: a peer that stops renewing leaves the ring when
// its Lease runs out, by the expiry timer, without any Lease event.
func TestLapsedLeaseExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset(lease("ghost", t0, 7))
		clk := clocktesting.NewFakeClock(t0)
		a := startMember(t, cs, clk, "a", nil)
		synctest.Wait()
		if got := a.rec.last(t).Assignment.Members(); !slices.Equal(got, []string{"a", "ghost"}) {
			t.Fatalf("members %v", got)
		}
		step(clk, 5*time.Second)
		if got := a.rec.last(t).Assignment.Members(); !slices.Equal(got, []string{"a", "ghost"}) {
			t.Fatalf("at 5s members %v", got)
		}
		step(clk, 2*time.Second) // t0+7s: the ghost's expiry
		c := a.rec.last(t)
		if !slices.Equal(c.Assignment.Members(), []string{"a"}) || len(c.Gained) == 0 {
			t.Fatalf("at 7s: %v gained %v", c.Assignment, c.Gained)
		}
		a.stop(t)
	})
}

// TestFailedRenewalsDropSelf: a member that cannot renew counts itself out
// when its own Lease lapses (a gap, never two owners), and back in once a
// renewal succeeds.
func TestFailedRenewalsDropSelf(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset()
		var mu sync.Mutex
		failing := false
		cs.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
			mu.Lock()
			defer mu.Unlock()
			if failing {
				return true, nil, errors.New("etcd is down")
			}
			return false, nil, nil
		})
		setFailing := func(v bool) {
			mu.Lock()
			defer mu.Unlock()
			failing = v
		}
		clk := clocktesting.NewFakeClock(t0)
		a := startMember(t, cs, clk, "a", nil)
		synctest.Wait()
		setFailing(true)
		step(clk, 5*time.Second)
		if err := a.m.Status().RenewError; err == nil || !strings.Contains(err.Error(), "etcd is down") {
			t.Fatalf("RenewError = %v", err)
		}
		step(clk, 5*time.Second)
		if !a.rec.last(t).Assignment.Has("a") {
			t.Fatal("a dropped itself before its Lease lapsed")
		}
		step(clk, 5*time.Second) // t0+15s: the last good renewal lapses
		c := a.rec.last(t)
		if c.Assignment.Has("a") || len(c.Lost) != 64 {
			t.Fatalf("a still in the ring after its Lease lapsed: %+v", c.Diff)
		}
		setFailing(false)
		step(clk, 5*time.Second)
		c = a.rec.last(t)
		if !c.Assignment.Has("a") || len(c.Gained) != 64 || a.m.Status().RenewError != nil {
			t.Fatalf("a did not come back: %+v", c.Diff)
		}
		a.stop(t)
	})
}

func TestMemberConflicts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		other := lease("b", t0, 60)
		other.Annotations = map[string]string{SlicesAnnotation: "1024"}
		cs := fake.NewClientset(other)
		clk := clocktesting.NewFakeClock(t0)
		a := startMember(t, cs, clk, "a", nil)
		synctest.Wait()
		if got := a.m.Status().Conflicts; !slices.Equal(got, []string{"b"}) {
			t.Fatalf("Conflicts = %v", got)
		}
		a.stop(t)
	})
}

func TestRunTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset()
		clk := clocktesting.NewFakeClock(t0)
		a := startMember(t, cs, clk, "a", nil)
		synctest.Wait()
		if err := a.m.Run(t.Context()); err == nil {
			t.Fatal("second Run succeeded")
		}
		a.stop(t)
	})
}

func TestMemberOptions(t *testing.T) {
	cs := fake.NewClientset()
	good := MemberOptions{Client: cs, Namespace: ns, Ring: "ring", Identity: "a"}
	for _, tc := range []struct {
		name string
		mod  func(*MemberOptions)
		want string
	}{
		{"no client", func(o *MemberOptions) { o.Client = nil }, "missing Client"},
		{"no namespace", func(o *MemberOptions) { o.Namespace = "" }, "missing Namespace"},
		{"no ring", func(o *MemberOptions) { o.Ring = "" }, "missing Ring"},
		{"ring not a label value", func(o *MemberOptions) { o.Ring = "a ring" }, "not a label value"},
		{"identity makes a bad name", func(o *MemberOptions) { o.Identity = "A_B" }, "lease name"},
		{"bad slices", func(o *MemberOptions) { o.Slices = -4 }, "slices"},
		{"short lease", func(o *MemberOptions) { o.LeaseDuration = 500 * time.Millisecond }, "under a second"},
		{"renew too slow", func(o *MemberOptions) { o.RenewInterval = time.Minute }, "RenewInterval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.mod(&o)
			_, err := NewMember(t.Context(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewMember: %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("defaults", func(t *testing.T) {
		t.Setenv("POD_NAME", "pod-7")
		o := good
		o.Identity = ""
		m, err := NewMember(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		if m.Identity() != "pod-7" || m.opts.Slices != DefaultSlices || m.opts.LeaseDuration != DefaultLeaseDuration ||
			m.opts.RenewInterval != DefaultLeaseDuration/3 || m.Status().Lease != "ring-pod-7" {
			t.Fatalf("defaults: %+v", m.opts)
		}
	})
}

// TestRingConverges: five members with different renewal intervals on one
// fake API server, the clock stepped by random amounts; after every step
// and every departure all running members hold the same assignment.
func TestRingConverges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset()
		clk := clocktesting.NewFakeClock(t0)
		r := rand.New(rand.NewPCG(15, 16))
		var ring []*running
		for i := range 5 {
			renew := time.Duration(2+i) * time.Second
			ring = append(ring, startMember(t, cs, clk, fmt.Sprintf("m%d", i), func(o *MemberOptions) { o.RenewInterval = renew }))
			synctest.Wait()
		}
		agree := func(when string) {
			t.Helper()
			want := ring[0].m.Assignment()
			if got := len(want.Members()); got != len(ring) {
				t.Fatalf("%s: %d members in the assignment, %d running", when, got, len(ring))
			}
			for _, x := range ring[1:] {
				if !x.m.Assignment().Equal(want) {
					t.Fatalf("%s: %s has %v, %s has %v", when, x.m.Identity(), x.m.Assignment(), ring[0].m.Identity(), want)
				}
			}
		}
		agree("after the joins")
		for i := range 30 {
			step(clk, time.Duration(r.IntN(3000))*time.Millisecond)
			agree(fmt.Sprintf("step %d", i))
		}
		for len(ring) > 1 {
			ring[len(ring)-1].stop(t)
			ring = ring[:len(ring)-1]
			synctest.Wait()
			agree(fmt.Sprintf("down to %d", len(ring)))
		}
		ring[0].stop(t)
	})
}

// countingMetrics records a Member's figures.
type countingMetrics struct {
	mu                                    sync.Mutex
	members, owned, gained, lost          int
	renewals, failedRenewals, collections int
	withheld                              int
}

func (c *countingMetrics) Assignment(members, owned int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.members, c.owned = members, owned
}

func (c *countingMetrics) Reassigned(gained, lost int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gained += gained
	c.lost += lost
}

func (c *countingMetrics) Renewal(ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok {
		c.renewals++
	} else {
		c.failedRenewals++
	}
}

func (c *countingMetrics) Withheld(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.withheld = n
}

func (c *countingMetrics) Collected() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.collections++
}

func TestMemberMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset(lease("ghost", t0.Add(-time.Hour), 15))
		clk := clocktesting.NewFakeClock(t0)
		m := &countingMetrics{}
		a := startMember(t, cs, clk, "a", func(o *MemberOptions) { o.Metrics = m; o.CollectAfter = time.Minute })
		synctest.Wait()
		step(clk, 5*time.Second)
		a.stop(t)
		m.mu.Lock()
		defer m.mu.Unlock()
		// Join (64 gained), then leave (64 lost); three renewals (the
		// first write, the first assignment's announcement at once, one
		// renewal); the ghost collected.
		if m.members != 0 || m.owned != 0 || m.gained != 64 || m.lost != 64 || m.renewals != 3 ||
			m.failedRenewals != 0 || m.collections != 1 {
			t.Fatalf("metrics: %+v", m)
		}
	})
}

// TestMemberTakesOverItsOldLease: a Lease of the member's name left by an
// earlier incarnation (crashed, expired) is updated in place, with a fresh
// acquireTime.
func TestMemberTakesOverItsOldLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		old := lease("a", t0.Add(-time.Hour), 15)
		old.Spec.AcquireTime = &metav1.MicroTime{Time: t0.Add(-2 * time.Hour)}
		cs := fake.NewClientset(old)
		clk := clocktesting.NewFakeClock(t0)
		a := startMember(t, cs, clk, "a", nil)
		synctest.Wait()
		l := getLease(t, cs, "ring-a")
		if !l.Spec.RenewTime.Time.Equal(t0) || !l.Spec.AcquireTime.Time.Equal(t0) || l.Annotations[SlicesAnnotation] != "64" {
			t.Fatalf("taken-over Lease: %+v", l.Spec)
		}
		if !a.rec.last(t).Assignment.Has("a") {
			t.Fatal("a is not in its ring")
		}
		a.stop(t)
	})
}

// TestMembersStartedTogetherSettle: replicas started within a renewal of
// each other publish nothing until the ring has been stable for the join
// window (RenewInterval by default), so each one's first Change already
// has all of them: no member claims the whole ring for a moment. A member
// that joins the established ring later publishes at once.
func TestMembersStartedTogetherSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset()
		clk := clocktesting.NewFakeClock(t0)
		window := func(o *MemberOptions) { o.JoinWindow = 0 } // the default: RenewInterval, 5 s
		var ms []*running
		for i, id := range []string{"a", "b", "c"} {
			if i > 0 {
				step(clk, 200*time.Millisecond)
			}
			ms = append(ms, startMember(t, cs, clk, id, window))
			synctest.Wait()
		}
		step(clk, 5*time.Second-time.Millisecond) // c started 5 s - 1 ms ago
		for _, m := range ms {
			if n := len(m.rec.all()); n != 0 {
				t.Fatalf("%s published %d Changes before the ring settled", m.m.Identity(), n)
			}
		}
		step(clk, time.Millisecond)
		for _, m := range ms {
			cs := m.rec.all()
			if len(cs) != 1 || !slices.Equal(cs[0].Assignment.Members(), []string{"a", "b", "c"}) {
				t.Fatalf("%s published %d Changes, the first for %v", m.m.Identity(), len(cs), cs[0].Assignment.Members())
			}
		}
		step(clk, 5*time.Second) // renewals announce the assignment
		d := startMember(t, cs, clk, "d", window)
		synctest.Wait()
		if cs := d.rec.all(); len(cs) != 1 || len(cs[0].Assignment.Members()) != 4 {
			t.Fatalf("d, joining an established ring, published %d Changes at once", len(cs))
		}
		for _, m := range append(ms, d) {
			m.stop(t)
		}
	})
}
