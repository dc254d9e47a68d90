package store_test

import (
	"slices"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/store"
)

// TestIndexReadsSeeWholeBatches writes generations of a 200-pod namespace
// (every pod of generation g on node "g"), each generation in one
// transaction, while readers list the namespace and a node through the
// indexes: above the snapshot threshold, these reads go lock-free once a
// snapshot is published. Every read must see exactly one generation, and
// readers that start after a transaction must never see an older one.
func TestIndexReadsSeeWholeBatches(t *testing.T) {
	s := newPodStore(t)
	r := s.Reader()
	const n, gens = 200, 60
	gen := func(g int) []*corev1.Pod {
		out := make([]*corev1.Pod, n)
		for i := range out {
			out[i] = pod("ns", "p"+strconv.Itoa(i), strconv.Itoa(g), nil)
		}
		return out
	}
	write := func(pods []*corev1.Pod) {
		s.Write(func(tx *store.Tx[*corev1.Pod]) {
			for _, p := range pods {
				if _, _, err := tx.Swap("ns/"+p.Name, p); err != nil {
					t.Error(err)
				}
			}
		})
	}
	write(gen(0))
	var done sync.WaitGroup
	var committed sync.Mutex // guards last
	last := 0
	stop := make(chan struct{})
	for reader := range 4 {
		byIndex := r.ByIndex
		if reader%2 == 1 { // ByIndexSeq must see whole batches too
			byIndex = func(name, value string) ([]*corev1.Pod, error) {
				seq, err := r.ByIndexSeq(name, value)
				if err != nil {
					return nil, err
				}
				return slices.Collect(seq), nil
			}
		}
		done.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				committed.Lock()
				floor := last
				committed.Unlock()
				list, err := byIndex("namespace", "ns")
				if err != nil || len(list) != n {
					t.Errorf("ByIndex: %d objects, %v", len(list), err)
					return
				}
				g, _ := strconv.Atoi(list[0].Spec.NodeName)
				if g < floor {
					t.Errorf("read generation %d after generation %d was committed", g, floor)
					return
				}
				for _, p := range list {
					if p.Spec.NodeName != list[0].Spec.NodeName {
						t.Errorf("ByIndex saw a mix of generations %s and %s", p.Spec.NodeName, list[0].Spec.NodeName)
						return
					}
				}
				if byNode, _ := byIndex("node", list[0].Spec.NodeName); len(byNode) != 0 && len(byNode) != n {
					t.Errorf("node %s: %d objects, want 0 or %d", list[0].Spec.NodeName, len(byNode), n)
					return
				}
			}
		})
	}
	for g := 1; g < gens; g++ {
		write(gen(g))
		committed.Lock()
		last = g
		committed.Unlock()
	}
	close(stop)
	done.Wait()
}
