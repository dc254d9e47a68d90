package workqueue

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cgworkqueue "k8s.io/client-go/util/workqueue"
)

// Benchmarks run listwatch and client-go side by side on identical inputs:
// go test -run x -bench . -benchmem -count 3 ./workqueue/

var benchImpls = []struct {
	name string
	new  func() cgQueue
}{
	{"listwatch", func() cgQueue {
		return rateLimited(NewItemExponentialRateLimiter[string](time.Microsecond, time.Second))
	}},
	{"client-go", func() cgQueue {
		return cgworkqueue.NewTypedRateLimitingQueue(
			cgworkqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Microsecond, time.Second))
	}},
}

const (
	benchAdds      = 1_000_000
	benchRoundSize = 10_000
)

// benchRound is one batch of adds: every tenth add repeats a key added a few
// adds earlier in the same round, so distinct = 90% of the adds.
type benchRound struct {
	keys     []string
	distinct int64
}

var benchRounds = sync.OnceValue(func() []benchRound {
	rounds := make([]benchRound, benchAdds/benchRoundSize)
	next := 0
	for r := range rounds {
		keys := make([]string, benchRoundSize)
		seen := map[string]bool{}
		for i := range keys {
			if i%10 == 9 {
				keys[i] = keys[i-1-(i/10)%5]
			} else {
				keys[i] = "namespace-" + strconv.Itoa(next%97) + "/object-" + strconv.Itoa(next)
				next++
			}
			seen[keys[i]] = true
		}
		rounds[r] = benchRound{keys: keys, distinct: int64(len(seen))}
	}
	return rounds
})

// BenchmarkWorkers: one op is 1M adds (10% duplicates) processed by the
// workers. The producer fills round r+1 while the workers drain round r;
// a round's items are handed out only after its last add, so the number of
// deduplicated items is deterministic and reported as processed/op for both
// queues. Leftovers (items a queue failed to collapse) are drained and
// counted too.
func BenchmarkWorkers(b *testing.B) {
	for _, workers := range []int{1, 4, 16} {
		for _, impl := range benchImpls {
			b.Run(fmt.Sprintf("workers=%d/%s", workers, impl.name), func(b *testing.B) {
				benchWorkers(b, impl.new, workers)
			})
		}
	}
}

func benchWorkers(b *testing.B, newQ func() cgQueue, workers int) {
	rounds := benchRounds()
	var processed int64
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for range b.N {
		processed += runWorkersOnce(newQ(), rounds, workers)
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	items := float64(b.N) * benchAdds
	b.ReportMetric(float64(processed)/float64(b.N), "processed/op")
	b.ReportMetric(items/b.Elapsed().Seconds(), "adds/s")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/items, "allocs/add")
}

func runWorkersOnce(q cgQueue, rounds []benchRound, workers int) int64 {
	filled := make([]chan struct{}, len(rounds))
	budgets := make([]atomic.Int64, len(rounds))
	for r := range rounds {
		filled[r] = make(chan struct{})
		budgets[r].Store(rounds[r].distinct)
	}
	var processed atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			n := int64(0)
			for r := range rounds {
				<-filled[r]
				for budgets[r].Add(-1) >= 0 {
					item, _ := q.Get()
					q.Done(item)
					n++
				}
			}
			processed.Add(n)
		})
	}
	for r, round := range rounds {
		for _, k := range round.keys {
			q.Add(k)
		}
		close(filled[r])
	}
	wg.Wait()
	for n := q.Len(); n > 0; n-- { // items the queue failed to collapse
		item, _ := q.Get()
		q.Done(item)
		processed.Add(1)
	}
	q.ShutDown()
	return processed.Load()
}

// BenchmarkRateLimited: 100k distinct items; every item fails once
// (AddRateLimited with a 1µs exponential limiter) and then succeeds
// (Forget), with 4 workers. One op is the whole workload.
func BenchmarkRateLimited(b *testing.B) {
	const items = 100_000
	keys := make([]string, items)
	for i := range keys {
		keys[i] = "namespace/object-" + strconv.Itoa(i)
	}
	for _, impl := range benchImpls {
		b.Run(impl.name, func(b *testing.B) {
			var processed int64
			for range b.N {
				processed += runRateLimitedOnce(impl.new(), keys, 4)
			}
			b.ReportMetric(float64(processed)/float64(b.N), "processed/op")
			b.ReportMetric(float64(b.N)*items/b.Elapsed().Seconds(), "items/s")
		})
	}
}

func runRateLimitedOnce(q cgQueue, keys []string, workers int) int64 {
	var remaining atomic.Int64
	remaining.Store(2 * int64(len(keys)))
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for remaining.Add(-1) >= 0 {
				item, _ := q.Get()
				if q.NumRequeues(item) == 0 {
					q.AddRateLimited(item)
				} else {
					q.Forget(item)
				}
				q.Done(item)
			}
		})
	}
	for _, k := range keys {
		q.Add(k)
	}
	wg.Wait()
	processed := 2 * int64(len(keys))
	for n := q.Len(); n > 0; n-- {
		item, _ := q.Get()
		q.Done(item)
		processed++
	}
	q.ShutDown()
	return processed
}

// BenchmarkAddAfter100kPending: one op is one AddAfter with a delay of one
// to two hours while at least 100k delays are pending. "insert" adds new
// keys (the pending set grows from 100k); "update" re-adds the 100k pending
// keys with fresh random delays (earliest due time wins). A final 1ns delay
// that must come out of Get proves each queue has taken in every delay
// before the timer stops (client-go hands delays to a goroutine over a
// channel).
func BenchmarkAddAfter100kPending(b *testing.B) {
	const pending = 100_000
	keys := make([]string, 1<<20)
	for i := range keys {
		keys[i] = "namespace/object-" + strconv.Itoa(i)
	}
	delays := benchDelays(len(keys))
	for _, mode := range []string{"insert", "update"} {
		for _, impl := range benchImpls {
			b.Run(mode+"/"+impl.name, func(b *testing.B) {
				q := impl.new()
				pendingKeys := keys[len(keys)-pending:]
				for i, k := range pendingKeys {
					q.AddAfter(k, delays[i])
				}
				b.ResetTimer()
				for i := range b.N {
					j := i & (len(keys) - 1)
					if mode == "insert" {
						q.AddAfter(keys[j], delays[j])
					} else {
						q.AddAfter(pendingKeys[i%pending], delays[j])
					}
				}
				q.AddAfter("sentinel", time.Nanosecond)
				if item, _ := q.Get(); item != "sentinel" {
					b.Fatalf("Get = %q, want sentinel", item)
				}
				b.StopTimer()
				q.ShutDown()
			})
		}
	}
}

// benchDelays returns n reproducible random delays between one and two hours.
func benchDelays(n int) []time.Duration {
	rng := rand.New(rand.NewPCG(1, 2))
	d := make([]time.Duration, n)
	for i := range d {
		d[i] = time.Hour + time.Duration(rng.Int64N(int64(time.Hour)))
	}
	return d
}
