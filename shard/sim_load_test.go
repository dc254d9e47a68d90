package shard

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// simFull runs the simulations at full size: 10 million keys and every
// observer (go test ./shard -run Simulation -sim.full -v). The default run
// samples, to stay within a few seconds under -race.
var simFull = flag.Bool("sim.full", false, "run the shard simulations at full size (10M keys, all observers)")

// simLoadSize is the size of the load simulation.
type simLoadSize struct {
	members, keys, events int
	slices                []int
}

func loadSize() simLoadSize {
	if *simFull {
		return simLoadSize{members: 1000, keys: 10_000_000, events: 50, slices: []int{1024, 4096, 16384, 65536, 262144}}
	}
	return simLoadSize{members: 1000, keys: 1_000_000, events: 20, slices: []int{1024, 4096, 16384}}
}

// loadStats summarises a distribution over members.
type loadStats struct{ mean, max, min float64 }

func statsOf(xs []float64) loadStats {
	s := loadStats{min: math.Inf(1)}
	for _, x := range xs {
		s.mean += x
		s.max = max(s.max, x)
		s.min = min(s.min, x)
	}
	s.mean /= float64(len(xs))
	return s
}

// TestSimulationLoad: 1000 members, 10 million keys (1 million unless
// -sim.full): the load per member in slices, keys and selector terms, and
// the keys moved by a join or a leave against the ideal keys/N. The
// figures are in docs/sharding.md.
func TestSimulationLoad(t *testing.T) {
	size := loadSize()
	r := rand.New(rand.NewPCG(2026, 17))
	members := make([]string, size.members)
	for i := range members {
		members[i] = fmt.Sprintf("controller-%d", i)
	}
	// One pass over the keys fills every slice count's histogram.
	hist := make([][]int, len(size.slices))
	for i, n := range size.slices {
		hist[i] = make([]int, n)
	}
	buf := make([]byte, 0, 36)
	for range size.keys {
		buf = appendUID(buf[:0], r)
		h := Hash(string(buf))
		for i, n := range size.slices {
			hist[i][sliceOf(h, n)]++
		}
	}
	var report strings.Builder
	fmt.Fprintf(&report, "\n%d members, %d keys\n", size.members, size.keys)
	fmt.Fprintf(&report, "| slices | slices/member mean (max) | keys/member max/mean | selector terms mean (max) | keys moved per join: mean, max (ideal keys/N) | per leave: mean, max | moved beyond the minimum |\n")
	fmt.Fprintf(&report, "| --- | --- | --- | --- | --- | --- | --- |\n")
	for i, n := range size.slices {
		a := MustAssign(members, Options{Slices: n})
		keysOf := func(ss []int) (k int) {
			for _, s := range ss {
				k += hist[i][s]
			}
			return k
		}
		var sl, kl, terms []float64
		for _, m := range members {
			owned := a.Owned(m)
			sl = append(sl, float64(len(owned)))
			kl = append(kl, float64(keysOf(owned)))
			terms = append(terms, float64(len(rangesOf(owned, n))))
		}
		ss, ks, ts := statsOf(sl), statsOf(kl), statsOf(terms)

		var joins, leaves []float64
		beyond := 0
		for e := range size.events {
			joiner := fmt.Sprintf("newcomer-%d", e)
			after, err := a.With(joiner)
			if err != nil {
				t.Fatal(err)
			}
			moved, _ := Moved(a, after)
			for _, s := range moved {
				if after.Owner(s) != joiner {
					beyond++ // a slice moved between two incumbents
				}
			}
			joins = append(joins, float64(keysOf(moved)))

			leaver := members[r.IntN(len(members))]
			after = a.Without(leaver)
			moved, _ = Moved(a, after)
			if !slices.Equal(moved, a.Owned(leaver)) {
				beyond++ // anything but the leaver's own slices moved
			}
			leaves = append(leaves, float64(keysOf(moved)))
		}
		if beyond != 0 {
			t.Errorf("%d slices: %d moves beyond the minimum", n, beyond)
		}
		js, ls := statsOf(joins), statsOf(leaves)
		ideal := float64(size.keys) / float64(size.members)
		fmt.Fprintf(&report, "| %d | %.1f (%.0f) | %.2f | %.1f (%.0f) | %.0f, %.0f (%.0f) | %.0f, %.0f | %d |\n",
			n, ss.mean, ss.max, ks.max/ks.mean, ts.mean, ts.max, js.mean, js.max, ideal, ls.mean, ls.max, beyond)

		// Rendezvous loads are binomial: the heaviest of 1000 members
		// sits about 3.3 standard deviations above the mean.
		if lambda := float64(n) / float64(size.members); ss.max > lambda+5*math.Sqrt(lambda)+2 {
			t.Errorf("%d slices: heaviest member owns %.0f slices, mean %.1f", n, ss.max, lambda)
		}
	}
	t.Log(report.String())
}
