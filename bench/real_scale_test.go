package bench

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// BenchmarkRealMemoryScale (issue 30): the largest number of realistic
// pods each subject syncs within a fixed memory limit, found by
// bisection on a real kube-apiserver holding BENCH_REAL_N of them
// (BenchmarkRealMemory's corpus; the server from BENCH_REAL_CONNECT, grown
// with BENCH_REAL_GROW=1). A probe syncs the first k batches of
// realBatchSize pods, streaming, protobuf, in a child process whose limit
// is BENCH_REAL_LIMIT (debug.SetMemoryLimit, as GOMEMLIMIT; 256MiB by
// default); it fits if the sync completes within BENCH_REAL_SCALE_TIMEOUT
// (5m) and the memory the Go runtime holds (what the limit bounds: every
// class but the released heap, sampled every 5 ms) never exceeds the
// limit; a probe stops at the first sample above it. The subjects
// (BENCH_REAL_SUBJECTS, client-go and listwatch by default) are probed in
// turn, one step of each bisection at a time; BENCH_REAL_SCALE_RANGE
// (subject=fits:fails, in pods) starts a subject's bisection from earlier
// probes.
//
//	BENCH_REAL_CONNECT=conn.json BENCH_REAL_N=45000 go test -run '^$' -bench '^BenchmarkRealMemoryScale$' -benchtime 1x -timeout 3h ./bench/
func BenchmarkRealMemoryScale(b *testing.B) {
	n := envInts(b, "BENCH_REAL_N", []int{45000})[0]
	limitQ, err := resource.ParseQuantity(envList("BENCH_REAL_LIMIT", []string{"256Mi"})[0])
	if err != nil {
		b.Fatal(err)
	}
	limit := limitQ.Value()
	timeout := envDuration(b, "BENCH_REAL_SCALE_TIMEOUT")
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	cfg := realServer(b, []string{"pods"}, n)
	if cfg == nil {
		return
	}
	dir := b.TempDir()
	type search struct {
		subject string
		lo, hi  int // batches: lo fits, hi does not (hi = max+1 until a probe fails)
		probes  []string
	}
	var searches []*search
	// BENCH_REAL_SCALE_RANGE resumes searches from earlier probes:
	// subject=fits:fails in pods (client-go=37500:45000,listwatch=...).
	ranges := map[string][2]int{}
	for _, r := range envList("BENCH_REAL_SCALE_RANGE", nil) {
		subject, bounds, _ := strings.Cut(r, "=")
		fitsS, failsS, _ := strings.Cut(bounds, ":")
		fits, err1 := strconv.Atoi(fitsS)
		fails, err2 := strconv.Atoi(failsS)
		if err := errors.Join(err1, err2); err != nil {
			b.Fatalf("BENCH_REAL_SCALE_RANGE %q: %v", r, err)
		}
		ranges[subject] = [2]int{fits / realBatchSize, fails / realBatchSize}
	}
	for _, s := range envList("BENCH_REAL_SUBJECTS", []string{"client-go", "listwatch"}) {
		se := &search{subject: s, lo: 0, hi: n/realBatchSize + 1}
		if r, ok := ranges[s]; ok {
			se.lo, se.hi = r[0], r[1]
		}
		searches = append(searches, se)
	}
	probe := func(s *search, k int) bool {
		job := realJob{Host: cfg.Host, Token: cfg.BearerToken, CAData: cfg.CAData, Subject: s.subject, Kind: "pods",
			Encoding: "protobuf", Selector: realSelector(b, k*realBatchSize), N: k * realBatchSize, Timeout: timeout, MemLimit: limit}
		res, err := runRealJobChild(b, dir, job, "100", nil)
		fits := err == nil && res.PeakTotal <= limit
		note := fmt.Sprintf("%d pods: held %.0f MiB, sync %v, CPU %v", k*realBatchSize, float64(res.PeakTotal)/(1<<20),
			res.Wall.Round(time.Millisecond), res.CPU.Round(time.Millisecond))
		if err != nil {
			note = fmt.Sprintf("%d pods: %v", k*realBatchSize, firstLine(err.Error()))
		}
		s.probes = append(s.probes, fmt.Sprintf("%s (%s)", note, map[bool]string{true: "fits", false: "does not fit"}[fits]))
		b.Logf("%s: %s", s.subject, s.probes[len(s.probes)-1])
		return fits
	}
	for {
		stepped := false
		for _, s := range searches {
			if s.hi-s.lo <= 1 {
				continue
			}
			stepped = true
			k := (s.lo + s.hi) / 2
			if s.hi == n/realBatchSize+1 && s.lo == 0 {
				k = n / realBatchSize // try the most first: it may all fit
			}
			if probe(s, k) {
				s.lo = k
			} else {
				s.hi = k
			}
		}
		if !stepped {
			break
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "largest N within %s (batches of %d pods):\n", limitQ.String(), realBatchSize)
	for _, s := range searches {
		largest := s.lo * realBatchSize
		more := ""
		if s.lo == n/realBatchSize {
			more = " (all the server holds)"
		}
		fmt.Fprintf(&out, "  %s: %d%s; probes: %s\n", s.subject, largest, more, strings.Join(s.probes, "; "))
		b.Run(s.subject, func(b *testing.B) { b.ReportMetric(float64(largest), "largest-N") })
	}
	b.Log(out.String())
	if f := os.Getenv("BENCH_REAL_OUT"); f != "" {
		if err := os.WriteFile(f, []byte(out.String()), 0o644); err != nil {
			b.Error(err)
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
