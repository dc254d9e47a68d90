package workqueue

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

// The paired benchmarks run listwatch and client-go alternately, several
// pairs per iteration (the order flips each time), and report the median
// per-pair ratios of wall time and of process CPU time. On a shared, noisy
// machine these medians are far steadier than comparing the separate
// sub-benchmarks, whose runs are seconds apart; CPU time also discounts
// time lost to other processes.

const pairsPerIteration = 3

// pairedSample is one implementation's cost in one pair.
type pairedSample struct{ wall, cpu time.Duration }

// pairedRun runs f for both implementations pairsPerIteration×b.N times
// and reports per-unit medians and median ratios.
func pairedRun(b *testing.B, unit string, work float64, f func(impl int) int64, setup ...func(impl int)) (counts [2]int64) {
	var samples [2][]pairedSample
	var wallRatios, cpuRatios []float64
	for i := range b.N * pairsPerIteration {
		var pair [2]pairedSample
		for k := range 2 {
			impl := (i + k) % 2
			for _, s := range setup {
				s(impl)
			}
			w0, c0 := time.Now(), processCPU()
			counts[impl] += f(impl)
			pair[impl] = pairedSample{wall: time.Since(w0), cpu: processCPU() - c0}
			samples[impl] = append(samples[impl], pair[impl])
		}
		wallRatios = append(wallRatios, float64(pair[1].wall)/float64(pair[0].wall))
		cpuRatios = append(cpuRatios, float64(pair[1].cpu)/float64(pair[0].cpu))
	}
	for impl, name := range []string{"listwatch", "client-go"} {
		walls := make([]float64, len(samples[impl]))
		for i, s := range samples[impl] {
			walls[i] = float64(s.wall.Nanoseconds()) / work
		}
		b.ReportMetric(median(walls), name+"-ns/"+unit)
	}
	b.ReportMetric(median(wallRatios), "speedup-wall")
	b.ReportMetric(median(cpuRatios), "speedup-cpu")
	return counts
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkWorkersPaired is BenchmarkWorkers (1M adds, 10% duplicates)
// with both queues in every iteration; processed-listwatch/op and
// processed-client-go/op must match.
func BenchmarkWorkersPaired(b *testing.B) {
	rounds := benchRounds()
	for _, workers := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			counts := pairedRun(b, "add", benchAdds, func(impl int) int64 {
				return runWorkersOnce(benchImpls[impl].new(), rounds, workers)
			})
			n := float64(b.N * pairsPerIteration)
			b.ReportMetric(float64(counts[0])/n, "processed-listwatch/run")
			b.ReportMetric(float64(counts[1])/n, "processed-client-go/run")
		})
	}
}

// BenchmarkAddAfter100kPendingPaired: each run builds a queue with 100k
// pending delays (untimed), then times 100k AddAfter calls of new keys
// ("insert") or of the pending keys with fresh delays ("update"), plus the
// sentinel that proves every delay was taken in.
func BenchmarkAddAfter100kPendingPaired(b *testing.B) {
	const pending, ops = 100_000, 100_000
	keys := make([]string, pending+ops)
	for i := range keys {
		keys[i] = "namespace/object-" + strconv.Itoa(i)
	}
	delays := benchDelays(len(keys))
	for _, mode := range []string{"insert", "update"} {
		b.Run(mode, func(b *testing.B) {
			var last cgQueue
			setup := func(impl int) cgQueue {
				if last != nil {
					last.ShutDown()
				}
				runtime.GC() // both start from a clean heap
				last = benchImpls[impl].new()
				for j := range pending {
					last.AddAfter(keys[j], delays[j])
				}
				return last
			}
			// Queues are built (and the previous one shut down) before
			// the timed part of each run.
			pairedRunWithSetup(b, "AddAfter", ops, setup, func(q cgQueue) {
				for j := range ops {
					if mode == "insert" {
						q.AddAfter(keys[pending+j], delays[pending+j])
					} else {
						q.AddAfter(keys[j], delays[pending+j])
					}
				}
				q.AddAfter("sentinel", time.Nanosecond)
				if item, _ := q.Get(); item != "sentinel" {
					b.Fatalf("Get = %q, want sentinel", item)
				}
			})
			last.ShutDown()
		})
	}
}

// pairedRunWithSetup is pairedRun with an untimed setup per run.
func pairedRunWithSetup(b *testing.B, unit string, work float64, setup func(impl int) cgQueue, run func(cgQueue)) {
	var prepared [2]cgQueue
	pairedRun(b, unit, work, func(impl int) int64 {
		run(prepared[impl])
		return 0
	}, func(impl int) { prepared[impl] = setup(impl) })
}
