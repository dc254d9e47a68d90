package store_test

import (
	"errors"
	"runtime"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/listwatch/store"
)

// bigAndSmallStore holds 500 pods: 10 on node "small", the rest on "big".
func bigAndSmallStore(t *testing.T) *store.Store[*corev1.Pod] {
	s := newPodStore(t)
	for i := range 500 {
		node := "big"
		if i%50 == 0 {
			node = "small"
		}
		if err := s.Upsert(pod("ns", "p"+strconv.Itoa(i), node, nil)); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// ByIndexSeq yields what ByIndex returns, for a small value (copied), a
// large one (its snapshot, before and after it is published), a missing
// value and an unknown index.
func TestByIndexSeqYieldsWhatByIndexReturns(t *testing.T) {
	r := bigAndSmallStore(t).Reader()
	for _, v := range []string{"small", "big", "big", "none"} {
		want, err := r.ByIndex("node", v)
		if err != nil {
			t.Fatal(err)
		}
		seq, err := r.ByIndexSeq("node", v)
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Collect(seq); !slices.Equal(got, want) {
			t.Errorf("node %s: ByIndexSeq yielded %d objects, ByIndex returned %d", v, len(got), len(want))
		}
	}
	if seq, err := r.ByIndexSeq("nope", "x"); !errors.Is(err, store.ErrUnknownIndex) || seq != nil {
		t.Errorf("unknown index: %v, nil iterator %v", err, seq == nil)
	}
}

// A large value with a published snapshot is iterated without copying it:
// a read allocates a few dozen bytes, however many objects it yields;
// and an iterator taken before a write still yields the objects of before.
func TestByIndexSeqDoesNotCopyALargeValue(t *testing.T) {
	s := newPodStore(t)
	for i := range 1000 {
		if err := s.Upsert(pod("ns", "p"+strconv.Itoa(i), "n1", nil)); err != nil {
			t.Fatal(err)
		}
	}
	r := s.Reader()
	if _, err := r.ByIndexSeq("node", "n1"); err != nil { // publishes the snapshot
		t.Fatal(err)
	}
	// Bytes, not allocations: the loop's own closure is heap-allocated
	// too. ByIndex allocates 8000 bytes per read here.
	count := 0
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range 100 {
		seq, _ := r.ByIndexSeq("node", "n1")
		for range seq {
			count++
		}
	}
	runtime.ReadMemStats(&m1)
	if perRead := (m1.TotalAlloc - m0.TotalAlloc) / 100; perRead > 256 {
		t.Errorf("ByIndexSeq over 1000 objects allocated %d bytes per read, want at most 256", perRead)
	}
	if count != 100*1000 {
		t.Errorf("yielded %d objects in 100 reads, want %d", count, 100*1000)
	}
	before, _ := r.ByIndexSeq("node", "n1")
	if err := s.Upsert(pod("ns", "p0", "n2", nil)); err != nil {
		t.Fatal(err)
	}
	if n := len(slices.Collect(before)); n != 1000 {
		t.Errorf("an iterator taken before a write yielded %d objects, want 1000", n)
	}
	after, _ := r.ByIndexSeq("node", "n1")
	if n := len(slices.Collect(after)); n != 999 {
		t.Errorf("an iterator taken after the write yielded %d objects, want 999", n)
	}
}

// Namespace(ns).ListSeq yields what List returns, with and without a
// selector, for a small namespace, a large one and all namespaces; a large
// namespace is not copied.
func TestListSeqYieldsWhatListReturns(t *testing.T) {
	s := newPodStore(t)
	for i := range 400 {
		ns, app := "big", "web"
		if i%40 == 0 {
			ns = "small"
		}
		if i%3 == 0 {
			app = "db"
		}
		if err := s.Upsert(pod(ns, "p"+strconv.Itoa(i), "n1", map[string]string{"app": app})); err != nil {
			t.Fatal(err)
		}
	}
	r := s.Reader()
	for _, ns := range []string{"small", "big", "", "none"} {
		for _, sel := range []labels.Selector{nil, labels.Everything(), labels.SelectorFromSet(labels.Set{"app": "db"})} {
			want := names(r.Namespace(ns).List(sel))
			got := names(slices.Collect(r.Namespace(ns).ListSeq(sel)))
			if !slices.Equal(got, want) {
				t.Errorf("namespace %q, selector %v: ListSeq yielded %d objects, List returned %d", ns, sel, len(got), len(want))
			}
		}
	}
	db := labels.SelectorFromSet(labels.Set{"app": "db"})
	_ = slices.Collect(r.Namespace("big").ListSeq(db)) // publishes the snapshot
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	n := 0
	for range 100 {
		for range r.Namespace("big").ListSeq(db) {
			n++
		}
	}
	runtime.ReadMemStats(&m1)
	if perRead := (m1.TotalAlloc - m0.TotalAlloc) / 100; perRead > 256 {
		t.Errorf("ListSeq over a 390-pod namespace allocated %d bytes per read, want at most 256", perRead)
	}
	if want := 100 * len(r.Namespace("big").List(db)); n != want {
		t.Errorf("yielded %d objects in 100 reads, want %d", n, want)
	}
}

// ByIndexAny returns what ByIndex returns, as []any, for a small value, a
// large one (before and after its snapshot is published), a missing value
// and an unknown index; ListAny what List returns.
func TestByIndexAnyReturnsWhatByIndexReturns(t *testing.T) {
	r := bigAndSmallStore(t).Reader()
	for _, v := range []string{"small", "big", "big", "none"} {
		want, err := r.ByIndex("node", v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.ByIndexAny("node", v)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("node %s: ByIndexAny returned %d objects, ByIndex %d", v, len(got), len(want))
		}
		for i := range got {
			if got[i] != any(want[i]) {
				t.Fatalf("node %s: object %d differs", v, i)
			}
		}
	}
	if _, err := r.ByIndexAny("nope", "x"); !errors.Is(err, store.ErrUnknownIndex) {
		t.Fatalf("unknown index: %v", err)
	}
	all, anyAll := r.List(), r.ListAny()
	if len(all) != len(anyAll) || len(all) != 500 {
		t.Fatalf("List %d objects, ListAny %d", len(all), len(anyAll))
	}
	for i := range all {
		if anyAll[i] != any(all[i]) {
			t.Fatalf("ListAny's object %d differs from List's", i)
		}
	}
}
