package workqueue

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

// TestDelaysMatchNaiveReference drives AddAfter with random keys, delays
// and time steps, and compares what becomes ready at each step with a naive
// model: per key the earliest pending due time, released in (due, call
// order).
func TestDelaysMatchNaiveReference(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		type pending struct {
			due time.Duration
			seq int
		}
		model := map[string]pending{}
		rng := rand.New(rand.NewPCG(8, 9))
		var now time.Duration
		calls := 0
		for step := range 400 {
			for range rng.IntN(30) {
				k := "k" + strconv.Itoa(rng.IntN(60))
				d := time.Duration(1+rng.IntN(50)) * time.Millisecond
				q.AddAfter(k, d)
				calls++
				if p, ok := model[k]; !ok || now+d < p.due {
					model[k] = pending{due: now + d, seq: calls}
				}
			}
			adv := time.Duration(rng.IntN(20)) * time.Millisecond
			time.Sleep(adv)
			now += adv
			synctest.Wait()
			var want []string
			for k, p := range model {
				if p.due <= now {
					want = append(want, k)
				}
			}
			slices.SortFunc(want, func(a, b string) int {
				return cmp.Or(cmp.Compare(model[a].due, model[b].due), cmp.Compare(model[a].seq, model[b].seq))
			})
			for _, k := range want {
				delete(model, k)
			}
			got := getAll(q)
			if !slices.Equal(got, want) {
				t.Fatalf("step %d at %v: ready %q, want %q", step, now, got, want)
			}
		}
		if live, _ := delayCounts(q); live != len(model) {
			t.Fatalf("%d live delays, model has %d", live, len(model))
		}
	})
}

// TestDelayHeapCompactsStaleNodes: moving due times earlier many times
// leaves stale nodes that are compacted away, without changing the result.
func TestDelayHeapCompactsStaleNodes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		for i := 1000; i > 0; i-- {
			for _, k := range []string{"a", "b", "c"} {
				q.AddAfter(k, time.Duration(i)*time.Second+time.Duration(len(k)))
			}
		}
		live, nodes := delayCounts(q)
		if nodes > 2*1024+3 || live != 3 {
			t.Fatalf("delay heap holds %d nodes, %d live; want ≤ 2051 nodes, 3 live", nodes, live)
		}
		time.Sleep(time.Second + 1)
		synctest.Wait()
		expectOrder(t, getAll(q), "a", "b", "c")
	})
}

// delayCounts returns the live and total delay nodes under the lock.
func delayCounts[T comparable](q *Typed[T]) (live, nodes int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.delays.live(), len(q.delays.a)
}
