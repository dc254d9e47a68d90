package store_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/store"
)

// TestTxReplaceSpansTransactions: a session opened in one transaction and
// ended in another deletes exactly what was neither written nor kept in
// between, reports each deletion with its last state, and leaves the
// resource version alone.
func TestTxReplaceSpansTransactions(t *testing.T) {
	s := newPodStore(t)
	for _, name := range []string{"a", "b", "c", "d"} {
		if err := s.Upsert(withRV(pod("ns", name, "n1", nil), "1")); err != nil {
			t.Fatal(err)
		}
	}
	s.Bookmark("5")
	s.Write(func(tx *store.Tx[*corev1.Pod]) {
		tx.BeginReplace()
		if _, _, err := tx.Swap("ns/a", withRV(pod("ns", "a", "n2", nil), "6")); err != nil {
			t.Fatal(err)
		}
	})
	var gone []string
	s.Write(func(tx *store.Tx[*corev1.Pod]) {
		tx.Keep("ns/b")
		tx.Keep("ns/missing")
		if _, _, err := tx.Swap("ns/e", withRV(pod("ns", "e", "n1", nil), "7")); err != nil {
			t.Fatal(err)
		}
		n, ok := tx.EndReplace(func(key string, old *corev1.Pod) {
			if old.Name == "" || old.ResourceVersion != "1" {
				t.Errorf("deleted %s with state %v", key, old)
			}
			gone = append(gone, key)
		})
		if !ok || n != 2 {
			t.Errorf("EndReplace = %d, %v; want 2, true", n, ok)
		}
	})
	slices.Sort(gone)
	if want := []string{"ns/c", "ns/d"}; !slices.Equal(gone, want) {
		t.Errorf("deleted %v, want %v", gone, want)
	}
	keys := s.ListKeys()
	slices.Sort(keys)
	if want := []string{"ns/a", "ns/b", "ns/e"}; !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	if got, _ := s.Reader().ByIndex("node", "n1"); len(got) != 2 {
		t.Errorf("node n1 holds %d pods, want 2 (b, e)", len(got))
	}
	if rv := s.Reader().LastSyncResourceVersion(); rv != "5" {
		t.Errorf("resource version %q, want 5 (EndReplace leaves it alone)", rv)
	}
	s.Write(func(tx *store.Tx[*corev1.Pod]) {
		if n, ok := tx.EndReplace(nil); ok || n != 0 {
			t.Errorf("EndReplace without a session = %d, %v; want 0, false", n, ok)
		}
	})
}
