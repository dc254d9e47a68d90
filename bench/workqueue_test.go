package bench

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cgworkqueue "k8s.io/client-go/util/workqueue"

	lwworkqueue "github.com/listwatch/listwatch/clientgo/util/workqueue"
	"github.com/listwatch/listwatch/workqueue"
)

type queue = cgworkqueue.TypedRateLimitingInterface[string]

// newQueue returns lib's rate-limiting queue with a 1µs..1s per-item
// exponential limiter (listwatch through its drop-in constructor).
func newQueue(lib string) queue {
	if lib == "listwatch" {
		return lwworkqueue.NewTypedRateLimitingQueue(workqueue.NewItemExponentialRateLimiter[string](time.Microsecond, time.Second))
	}
	return cgworkqueue.NewTypedRateLimitingQueue(
		cgworkqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Microsecond, time.Second))
}

const (
	wqRoundAdds = 10_000
	wqRounds    = 100 // 1M adds before keys repeat
)

// wqRound is one batch of adds in which every tenth add repeats a key
// added a few adds before (10% duplicates); distinct counts the keys.
type wqRound struct {
	keys     []string
	distinct int64
}

var wqInput = sync.OnceValue(func() []wqRound {
	rounds := make([]wqRound, wqRounds)
	next := 0
	for r := range rounds {
		keys := make([]string, wqRoundAdds)
		seen := make(map[string]struct{}, wqRoundAdds)
		for i := range keys {
			if i%10 == 9 {
				keys[i] = keys[i-1-i%7]
			} else {
				keys[i] = "ns-" + strconv.Itoa(next%100) + "/pod-" + strconv.Itoa(next)
				next++
			}
			seen[keys[i]] = struct{}{}
		}
		rounds[r] = wqRound{keys: keys, distinct: int64(len(seen))}
	}
	return rounds
})

// BenchmarkWorkqueue (scenario 7): one op is one round of 10,000 adds
// (10% duplicates of keys still queued) processed by 1 or 4 workers
// (Get, Done). The producer fills round r+1 while the workers drain round
// r; a round's keys are handed out only after its last add, so the
// number of items processed is deterministic: processed/op must be equal
// for both libraries (9,000).
func BenchmarkWorkqueue(b *testing.B) {
	rounds := wqInput()
	for _, workers := range []int{1, 4} {
		for _, lib := range libs {
			b.Run(fmt.Sprintf("workers=%d/%s", workers, lib), func(b *testing.B) {
				q := newQueue(lib)
				defer q.ShutDown()
				b.ResetTimer()
				m := startMeter()
				processed := runRounds(q, rounds, b.N, workers)
				b.StopTimer()
				m.report(b, float64(b.N)*wqRoundAdds, "add")
				b.ReportMetric(float64(processed)/float64(b.N), "processed/op")
			})
		}
	}
}

func runRounds(q queue, rounds []wqRound, n, workers int) int64 {
	filled := make([]chan struct{}, n)
	finished := make([]chan struct{}, n)
	budget := make([]atomic.Int64, n)
	remaining := make([]atomic.Int64, n)
	for r := range n {
		filled[r] = make(chan struct{})
		finished[r] = make(chan struct{})
		budget[r].Store(rounds[r%len(rounds)].distinct)
		remaining[r].Store(rounds[r%len(rounds)].distinct)
	}
	var processed atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for r := range n {
				<-filled[r]
				for budget[r].Add(-1) >= 0 {
					item, _ := q.Get()
					q.Done(item)
					processed.Add(1)
					if remaining[r].Add(-1) == 0 {
						close(finished[r])
					}
				}
			}
		})
	}
	for r := range n {
		// Keys repeat every len(rounds) rounds: never let the producer get
		// that far ahead, or a repeated key would collapse into one still
		// queued from the earlier round and the workers would wait forever
		// for an item that will never come.
		if lag := len(rounds) / 2; r >= lag {
			<-finished[r-lag]
		}
		for _, k := range rounds[r%len(rounds)].keys {
			q.Add(k)
		}
		close(filled[r])
	}
	wg.Wait()
	for q.Len() > 0 { // items a queue failed to deduplicate
		item, _ := q.Get()
		q.Done(item)
		processed.Add(1)
	}
	return processed.Load()
}

// BenchmarkWorkqueueRateLimited: one op is 10,000 distinct items, each of
// which fails once (AddRateLimited, 1µs base delay) and then succeeds
// (Forget), with 4 workers: 20,000 Gets per op.
func BenchmarkWorkqueueRateLimited(b *testing.B) {
	keys := wqInput()[0].keys[:wqRoundAdds]
	distinct := make([]string, 0, len(keys))
	seen := map[string]bool{}
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			distinct = append(distinct, k)
		}
	}
	for _, lib := range libs {
		b.Run(lib, func(b *testing.B) {
			q := newQueue(lib)
			defer q.ShutDown()
			b.ResetTimer()
			m := startMeter()
			for range b.N {
				rateLimitedRound(q, distinct, 4)
			}
			b.StopTimer()
			m.report(b, float64(b.N*len(distinct)), "item")
		})
	}
}

func rateLimitedRound(q queue, keys []string, workers int) {
	var left atomic.Int64
	left.Store(2 * int64(len(keys)))
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
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
}

// BenchmarkAddAfter: one op is one AddAfter of a new key, due in one to
// two hours, with 100k delays already pending. A last AddAfter of 1ns,
// which Get must return, proves the queue has taken in every delay before
// the timer stops (client-go hands delays to a goroutine).
func BenchmarkAddAfter(b *testing.B) {
	const pending = 100_000
	keys := make([]string, 1<<20)
	delays := make([]time.Duration, len(keys))
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range keys {
		keys[i] = "ns/pod-" + strconv.Itoa(i)
		delays[i] = time.Hour + time.Duration(rng.Int64N(int64(time.Hour)))
	}
	for _, lib := range libs {
		b.Run(lib, func(b *testing.B) {
			q := newQueue(lib)
			defer q.ShutDown()
			for i := range pending {
				q.AddAfter(keys[len(keys)-1-i], delays[i])
			}
			b.ResetTimer()
			m := startMeter()
			for i := range b.N {
				j := i % (len(keys) - pending)
				q.AddAfter(keys[j], delays[j])
			}
			q.AddAfter("sentinel", time.Nanosecond)
			if item, _ := q.Get(); item != "sentinel" {
				b.Fatalf("Get = %q, want sentinel", item)
			}
			b.StopTimer()
			m.report(b, float64(b.N), "AddAfter")
		})
	}
}
