package deltafifo

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
)

// TestConcurrentProducersKeepPerKeyOrder runs several producers against one
// consumer, in both modes, and checks that every event arrives exactly once
// and that each key's versions arrive in the order they were written.
func TestConcurrentProducersKeepPerKeyOrder(t *testing.T) {
	const producers, perProducer = 4, 500
	for _, inOrder := range []bool{false, true} {
		t.Run(fmt.Sprintf("inOrder=%v", inOrder), func(t *testing.T) {
			f := newFIFO(t, Options[obj]{InOrder: inOrder, MaxBatch: 7})
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					for i := range perProducer {
						// Each producer owns its keys, so its writes to a key are ordered.
						o := mk("ns", fmt.Sprintf("p%d-k%d", p, i%10), i+1)
						if err := f.Update(o); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			last := map[string]int{}
			seen := 0
			check := func(key string, ds []Delta[obj]) {
				for _, d := range ds {
					rv, _ := strconv.Atoi(d.Object.ResourceVersion)
					if rv <= last[key] {
						t.Errorf("%s: version %d after %d", key, rv, last[key])
					}
					last[key] = rv
					seen++
				}
			}
			for seen < producers*perProducer {
				var err error
				if seen%2 == 0 {
					err = f.Pop(t.Context(), func(key string, ds []Delta[obj], _ bool) error {
						check(key, ds)
						return nil
					})
				} else {
					err = f.PopBatch(t.Context(), func(items []Item[obj], _ bool) error {
						for _, it := range items {
							check(it.Key, it.Deltas)
						}
						return nil
					})
				}
				mustOK(t, err)
			}
			wg.Wait()
			if f.Len() != 0 || seen != producers*perProducer {
				t.Fatalf("seen %d events, %d left queued", seen, f.Len())
			}
		})
	}
}
