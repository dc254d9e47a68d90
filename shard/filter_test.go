package shard

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFilterFollowsChanges(t *testing.T) {
	f, err := NewFilter("")
	if err != nil {
		t.Fatal(err)
	}
	obj := testObject("ns", "uid-1")
	if f.Owns(obj) {
		t.Fatal("a Filter owns something before its first Change")
	}
	v := view{self: "a", slices: 64}
	peers := []Peer{{Identity: "a", Renewed: t0, Duration: time.Minute}}
	c, _, _ := v.observe(peers, t0)
	f.OnChange(c)
	if !f.Owns(obj) {
		t.Fatal("sole member does not own an object")
	}
	peers = append(peers, Peer{Identity: "b", Renewed: t0, Duration: time.Minute})
	c, _, _ = v.observe(peers, t0)
	f.Update(c)
	m, _ := c.Assignment.Matcher("a", FieldUID)
	lost, _ := c.LostMatcher("")
	r := rand.New(rand.NewPCG(11, 12))
	typed := FilterFunc[*corev1.Pod](f)
	for range 500 {
		o := testObject("ns", randomUID(r))
		if f.Owns(o) != m.Owns(o) {
			t.Fatal("Filter and Matcher disagree")
		}
		if lost.Owns(o) == f.Owns(o) {
			t.Fatal("an object both lost and owned, or neither while a had it all")
		}
		p := &corev1.Pod{ObjectMeta: o.ObjectMeta}
		if typed(p) != f.Owns(o) {
			t.Fatal("FilterFunc disagrees")
		}
	}
	if _, err := NewFilter("metadata.name"); err == nil {
		t.Error("NewFilter accepted an unsupported field")
	}
	if _, err := c.GainedMatcher("metadata.name"); err == nil {
		t.Error("GainedMatcher accepted an unsupported field")
	}
}

// TestGainedLostMatchers: the matchers own exactly the slices of the Diff.
func TestGainedLostMatchers(t *testing.T) {
	old := MustAssign([]string{"a", "b", "c"}, Options{Slices: 256})
	next := old.Without("c")
	d, _ := DiffFor(old, next, "a")
	c := Change{Member: "a", Assignment: next, Previous: old, Diff: d}
	gained, _ := c.GainedMatcher(FieldNamespace)
	lost, _ := c.LostMatcher(FieldNamespace)
	for s := range 256 {
		h := sliceStart(s, 256)
		if gained.OwnsHash(h) != slices.Contains(d.Gained, s) || lost.OwnsHash(h) {
			t.Fatalf("slice %d: gained %v lost %v, diff %+v", s, gained.OwnsHash(h), lost.OwnsHash(h), d)
		}
	}
	if gained.Field() != FieldNamespace {
		t.Error("GainedMatcher ignores its field")
	}
}

// TestFilterConcurrentUpdate: while the member switches between two
// assignments, concurrent readers see for every object what one of them
// says, and the Filter ends as the last one says.
func TestFilterConcurrentUpdate(t *testing.T) {
	f, err := NewFilter(FieldUID)
	if err != nil {
		t.Fatal(err)
	}
	ab := MustAssign([]string{"a", "b"}, Options{Slices: 128})
	ac := MustAssign([]string{"a", "c"}, Options{Slices: 128})
	mab, _ := ab.Matcher("a", FieldUID)
	mac, _ := ac.Matcher("a", FieldUID)
	r := rand.New(rand.NewPCG(13, 14))
	objs := make([]*metav1.PartialObjectMetadata, 2000)
	differ := 0
	for i := range objs {
		objs[i] = testObject("ns", randomUID(r))
		if mab.Owns(objs[i]) != mac.Owns(objs[i]) {
			differ++
		}
	}
	if differ == 0 || differ == len(objs) {
		t.Fatalf("the assignments differ on %d of %d objects: nothing to tell them apart by", differ, len(objs))
	}
	f.Update(changeFor(ab, "a"))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for _, o := range objs {
				if got := f.Owns(o); got != mab.Owns(o) && got != mac.Owns(o) {
					t.Errorf("Owns(%s) = %v, which neither assignment says", o.UID, got)
					return
				}
			}
		})
	}
	for i := range 50 {
		f.Update(changeFor([]*Assignment{ac, ab}[i%2], "a"))
	}
	wg.Wait()
	for _, o := range objs {
		if f.Owns(o) != mab.Owns(o) {
			t.Fatalf("after the last Update, Owns(%s) = %v, its assignment says %v", o.UID, f.Owns(o), mab.Owns(o))
		}
	}
}
