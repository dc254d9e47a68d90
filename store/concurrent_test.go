package store_test

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/listwatch/store"
)

// TestConcurrentReadersAndWriters runs writers (upserts, deletes, a
// Replace and an incremental replace) against readers of every kind under
// -race. Readers check what they can check mid-flight (each result is
// consistent with the query); the final content is checked exactly.
func TestConcurrentReadersAndWriters(t *testing.T) {
	s := newPodStore(t)
	r := s.Reader()
	const writers, rounds = 2, 300
	done := make(chan struct{})
	var readers sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 3 {
		readers.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				if err := readOnce(r, i, n); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() { write(t, s, w, rounds) })
	}
	wg.Wait()
	close(done)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Every writer ends with ns-w/p0..p9 on node "final".
	keys, err := r.IndexKeys("node", "final")
	if err != nil || len(keys) != writers*10 || r.Len() != writers*10 {
		t.Fatalf("final: %d keys on node final (%v), %d stored", len(keys), err, r.Len())
	}
}

// write runs one writer's operations on its own namespace.
func write(t *testing.T, s *store.Store[*corev1.Pod], w, rounds int) {
	ns := "ns-" + strconv.Itoa(w)
	for i := range rounds {
		p := pod(ns, "p"+strconv.Itoa(i%10), "node-"+strconv.Itoa(i%3), map[string]string{"round": strconv.Itoa(i % 2)})
		if err := s.Upsert(p); err != nil {
			t.Error(err)
		}
		if i%7 == 0 {
			_ = s.Delete(pod(ns, "p"+strconv.Itoa((i+3)%10), "", nil))
		}
	}
	// End with a known state: every object of the namespace on node "final".
	final := make([]*corev1.Pod, 10)
	for i := range final {
		final[i] = pod(ns, "p"+strconv.Itoa(i), "final", nil)
		if err := s.Upsert(final[i]); err != nil {
			t.Error(err)
		}
	}
}

// readOnce issues one read of each kind and checks its result.
func readOnce(r store.Reader[*corev1.Pod], reader, n int) error {
	ns := "ns-" + strconv.Itoa((reader+n)%2)
	for _, p := range r.Namespace(ns).List(labels.SelectorFromSet(labels.Set{"round": "1"})) {
		if p.Namespace != ns || p.Labels["round"] != "1" {
			return fmt.Errorf("namespace %s round=1 list returned %s/%s %v", ns, p.Namespace, p.Name, p.Labels)
		}
	}
	node := "node-" + strconv.Itoa(n%3)
	onNode, err := r.ByIndex("node", node)
	if err != nil {
		return err
	}
	for _, p := range onNode {
		if p.Spec.NodeName != node {
			return fmt.Errorf("ByIndex(node, %s) returned a pod on %s", node, p.Spec.NodeName)
		}
	}
	keys, err := r.IndexKeys("node", node)
	if err != nil || !slices.IsSorted(keys) {
		return fmt.Errorf("IndexKeys unsorted or failed: %v %v", keys, err)
	}
	if p, ok := r.Namespace(ns).Get("p1"); ok && (p.Namespace != ns || p.Name != "p1") {
		return fmt.Errorf("Get(p1) returned %s/%s", p.Namespace, p.Name)
	}
	_ = r.List()
	_, _ = r.ListIndexValues("node")
	return nil
}

// TestConcurrentReplaceSessions races Replace and an incremental replace
// with readers: the store must end with exactly the committed content.
func TestConcurrentReplaceSessions(t *testing.T) {
	s := newPodStore(t)
	r := s.Reader()
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 50 {
			sess := s.BeginReplace()
			for j := range 20 {
				_ = sess.Upsert(pod("s", "p"+strconv.Itoa((i+j)%30), "n1", nil))
			}
			_, _ = sess.Commit(strconv.Itoa(i))
		}
	})
	wg.Go(func() {
		for range 100 {
			if l := len(r.Namespace("s").List(nil)); l > 30 {
				t.Errorf("namespace holds %d > 30 objects", l)
			}
			_, _ = r.ByIndex("node", "n1")
		}
	})
	wg.Wait()
	if err := s.Replace([]*corev1.Pod{pod("s", "last", "n2", nil)}, "99"); err != nil {
		t.Fatal(err)
	}
	if keys := r.ListKeys(); !slices.Equal(keys, []string{"s/last"}) {
		t.Fatalf("after final Replace: %v", keys)
	}
}

// TestReplaceIsAtomicForReaders alternates Replace between two contents
// while readers list: every List must be entirely one content or the other.
func TestReplaceIsAtomicForReaders(t *testing.T) {
	s := newPodStore(t)
	r := s.Reader()
	contents := [2][]*corev1.Pod{}
	for i := range 40 {
		contents[0] = append(contents[0], pod("ns", "p"+strconv.Itoa(i), "blue", nil))
		contents[1] = append(contents[1], pod("ns", "p"+strconv.Itoa(i+20), "green", nil))
	}
	if err := s.Replace(contents[0], "0"); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				list := r.List()
				for _, p := range list {
					if p.Spec.NodeName != list[0].Spec.NodeName || len(list) != 40 {
						t.Errorf("List saw a mix: %d objects, %s and %s", len(list), p.Spec.NodeName, list[0].Spec.NodeName)
						return
					}
				}
			}
		})
	}
	for i := range 200 {
		if err := s.Replace(contents[i%2], strconv.Itoa(i)); err != nil {
			t.Error(err)
		}
	}
	close(done)
	readers.Wait()
}
