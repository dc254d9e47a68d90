package store_test

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/store"
)

func TestReplace(t *testing.T) {
	var nilPod *corev1.Pod
	for _, tc := range []struct {
		name     string
		items    []*corev1.Pod
		wantErr  error
		wantKeys []string
		wantRV   string
	}{
		{"empty list clears", nil, nil, []string{}, "10"},
		{"removes unlisted, adds new", []*corev1.Pod{pod("ns", "b", "n1", nil), pod("ns", "c", "n2", nil)}, nil, []string{"ns/b", "ns/c"}, "10"},
		{"duplicate keys: last wins", []*corev1.Pod{pod("ns", "c", "n1", nil), pod("ns", "c", "n2", nil)}, nil, []string{"ns/c"}, "10"},
		{"key error changes nothing", []*corev1.Pod{pod("ns", "c", "n1", nil), pod("ns", "", "n1", nil)}, store.ErrNoName, []string{"ns/a", "ns/b"}, "2"},
		{"nil item changes nothing", []*corev1.Pod{nilPod}, store.ErrNilObject, []string{"ns/a", "ns/b"}, "2"},
		{"index error drops that item", []*corev1.Pod{pod("ns", "a", "bad", nil), pod("ns", "c", "n1", nil)}, store.ErrIndexFunc, []string{"ns/c"}, "10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newPodStore(t)
			_ = s.Add(withRV(pod("ns", "a", "n1", nil), "1"))
			_ = s.Add(withRV(pod("ns", "b", "n1", nil), "2"))
			err := s.Replace(tc.items, "10")
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Replace: %v, want %v", err, tc.wantErr)
			}
			r := s.Reader()
			keys := r.ListKeys()
			slices.Sort(keys)
			if !slices.Equal(keys, tc.wantKeys) || r.LastSyncResourceVersion() != tc.wantRV {
				t.Fatalf("keys %v rv %q, want %v %q", keys, r.LastSyncResourceVersion(), tc.wantKeys, tc.wantRV)
			}
			for _, k := range keys {
				p, _ := r.GetByKey(k)
				if idx, _ := r.IndexKeys("node", p.Spec.NodeName); !slices.Contains(idx, k) {
					t.Fatalf("%s not indexed under %q", k, p.Spec.NodeName)
				}
			}
		})
	}
}

func TestReplaceSession(t *testing.T) {
	s := newPodStore(t)
	r := s.Reader()
	for _, n := range []string{"a", "b", "c"} {
		_ = s.Add(pod("ns", n, "n1", nil))
	}
	sess := s.BeginReplace()
	// Page one.
	if err := sess.Upsert(pod("ns", "a", "n2", nil)); err != nil {
		t.Fatal(err)
	}
	// Readers see the mix until Commit: a is new, b and c are old.
	if got := keysOnNode(r, "n1"); !slices.Equal(got, []string{"ns/b", "ns/c"}) {
		t.Fatalf("during session, n1 holds %v", got)
	}
	// An ordinary write during the session counts as seen.
	_ = s.Upsert(pod("ns", "d", "n1", nil))
	// Page two.
	if err := sess.Upsert(pod("ns", "e", "n1", nil)); err != nil {
		t.Fatal(err)
	}
	var nilPod *corev1.Pod
	if err := sess.Upsert(nilPod); !errors.Is(err, store.ErrNilObject) {
		t.Fatalf("session Upsert(nil): %v", err)
	}
	deleted, err := sess.Commit("20")
	if err != nil || deleted != 2 {
		t.Fatalf("Commit = %d, %v; want 2 deleted", deleted, err)
	}
	keys := r.ListKeys()
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"ns/a", "ns/d", "ns/e"}) || r.LastSyncResourceVersion() != "20" {
		t.Fatalf("after Commit: %v rv %q", keys, r.LastSyncResourceVersion())
	}
	if _, err := sess.Commit("21"); !errors.Is(err, store.ErrReplaceClosed) {
		t.Fatalf("second Commit: %v", err)
	}
}

func TestReplaceSessionAbortAndSupersede(t *testing.T) {
	s := newPodStore(t)
	_ = s.Add(pod("ns", "a", "n1", nil))
	aborted := s.BeginReplace()
	_ = aborted.Upsert(pod("ns", "b", "n1", nil))
	aborted.Abort()
	aborted.Abort() // no-op
	if s.Reader().Len() != 2 {
		t.Fatalf("Abort must keep everything: %v", s.ListKeys())
	}
	old := s.BeginReplace()
	newer := s.BeginReplace()
	if err := old.Upsert(pod("ns", "c", "n1", nil)); !errors.Is(err, store.ErrReplaceClosed) {
		t.Fatalf("superseded session Upsert: %v", err)
	}
	old.Abort() // must not close the newer session
	_ = newer.Upsert(pod("ns", "a", "n1", nil))
	if n, err := newer.Commit("5"); err != nil || n != 1 {
		t.Fatalf("newer Commit = %d, %v", n, err)
	}
	third := s.BeginReplace()
	if err := s.Replace(nil, "6"); err != nil {
		t.Fatal(err)
	}
	if _, err := third.Commit("7"); !errors.Is(err, store.ErrReplaceClosed) {
		t.Fatalf("Replace must close the open session: %v", err)
	}
}

func keysOnNode(r store.Reader[*corev1.Pod], node string) []string {
	keys, _ := r.IndexKeys("node", node)
	return keys
}
