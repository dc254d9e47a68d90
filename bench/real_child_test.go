package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
)

// A child process of BenchmarkRealMemory measures one subject syncing one
// kind, alone: the parent re-executes the test binary with
// realJobEnv naming a job file, and TestMain hands over to realChildMain
// before any test or benchmark runs. The child writes its realResult as
// JSON to the job's Out file and exits. BENCH_REAL_HEAPPROFILE and
// BENCH_REAL_CPUPROFILE name files for a heap profile of the synced cache
// and a CPU profile of the sync (use one subject and one pass).

const realJobEnv = "LISTWATCH_REALMEM_JOB"

// realJob is one child's task.
type realJob struct {
	Host, Token string
	CAData      []byte
	Subject     string
	Kind        string
	Encoding    string
	Paged       bool
	Selector    string
	N           int           // objects the subject must cache
	Timeout     time.Duration // for the sync
	Out         string
	// Refs, when set, are the namespace/name keys a controller's custom
	// resources reference: after the sync the child reads each of them
	// Rounds times (realRun.read), changing references and data as it
	// goes (realSteady).
	Refs   []string
	Rounds int
	// MemLimit, if set, is the child's memory limit (debug.SetMemoryLimit,
	// as GOMEMLIMIT): the child then samples the memory the runtime holds
	// during the sync (realResult.PeakTotal).
	MemLimit int64
}

// realResult is what a child measured.
type realResult struct {
	// LiveBytes is the live heap after the sync (two forced collections)
	// minus the live heap before the subject started.
	LiveBytes int64
	// PeakBytes is the largest live heap measured at the end of a garbage
	// collection cycle during the sync (and the synced state), minus the
	// same base.
	PeakBytes int64
	// CPU is the process's user+sys time from starting the subject until
	// it has synced and its handler has seen every add; Wall the same in
	// wall time.
	CPU, Wall time.Duration
	// GCs is the number of collection cycles during the sync; Missed those
	// that ended while the sampler had not yet run for the one before.
	GCs, Missed uint64
	// MaxRSS is the process's peak resident set (getrusage), bytes.
	MaxRSS int64
	// PeakTotal is, with MemLimit, the largest amount of memory the Go
	// runtime held (mapped and not released: what the limit bounds),
	// sampled every 5 ms during the sync.
	PeakTotal int64
	// Lists and Watches count the requests the subject sent.
	Lists, Watches int64
	Stats          map[string]float64
	// Steady is what the reads after the sync measured (with Refs).
	Steady *realSteadyResult `json:",omitempty"`
	Err    string
}

// realChildMain runs the job named by realJobEnv, if set, and returns
// whether it did (and the exit code).
func realChildMain() (int, bool) {
	path := os.Getenv(realJobEnv)
	if path == "" {
		return 0, false
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2, true
	}
	var job realJob
	if err := json.Unmarshal(raw, &job); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2, true
	}
	res := runRealJob(job)
	out, _ := json.Marshal(res)
	if err := os.WriteFile(job.Out, out, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2, true
	}
	if res.Err != "" {
		fmt.Fprintln(os.Stderr, res.Err)
		return 1, true
	}
	return 0, true
}

// requestCounter counts list and watch requests.
type requestCounter struct {
	lists, watches atomic.Int64
}

// counting is a transport that counts its requests in c.
type counting struct {
	rt http.RoundTripper
	c  *requestCounter
}

func (t counting) RoundTrip(r *http.Request) (*http.Response, error) {
	if q := r.URL.Query(); q.Get("watch") == "true" || q.Get("watch") == "1" || strings.Contains(r.URL.Path, "/watch/") {
		t.c.watches.Add(1)
	} else {
		t.c.lists.Add(1)
	}
	return t.rt.RoundTrip(r)
}

func runRealJob(job realJob) (res realResult) {
	fail := func(err error) realResult { res.Err = err.Error(); return res }
	subject, ok := realSubjects[job.Subject]
	if !ok {
		return fail(fmt.Errorf("unknown subject %q", job.Subject))
	}
	ctx, cancel := context.WithTimeout(context.Background(), job.Timeout+time.Minute) //lint:allow-background a child process's main
	defer cancel()
	counter := &requestCounter{}
	cfg := &rest.Config{Host: job.Host, BearerToken: job.Token, TLSClientConfig: rest.TLSClientConfig{CAData: job.CAData}, QPS: -1,
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper { return counting{rt, counter} }}
	var added atomic.Int64
	all := make(chan struct{})
	env := realEnv{cfg: cfg, kind: job.Kind, encoding: job.Encoding, paged: job.Paged, selector: job.Selector,
		added: func() {
			if added.Add(1) == int64(job.N) {
				close(all)
			}
		}}

	heapProfile, cpuProfile := os.Getenv("BENCH_REAL_HEAPPROFILE"), os.Getenv("BENCH_REAL_CPUPROFILE")
	if heapProfile != "" {
		runtime.MemProfileRate = 4096
	}
	if job.MemLimit > 0 {
		debug.SetMemoryLimit(job.MemLimit)
	}
	base := liveHeap()
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail(err)
		}
	}
	s := newGCSampler()
	cycles0 := gcCycles()
	var total *totalSampler
	if job.MemLimit > 0 {
		total = sampleTotal(5*time.Millisecond, job.MemLimit)
	}
	var over <-chan struct{} // nil (never ready) without a limit
	if total != nil {
		over = total.over
	}
	m := startMeter()
	run, err := subject.start(ctx, env)
	if err != nil {
		return fail(err)
	}
	defer run.stop()
	timeout := time.NewTimer(job.Timeout)
	defer timeout.Stop()
	select {
	case <-all:
	case <-over: // the probe has failed already: no need to watch it thrash
		return fail(fmt.Errorf("%s: held more than the limit (%d MiB) after %d of %d adds", job.Subject, job.MemLimit>>20, added.Load(), job.N))
	case <-timeout.C:
		return fail(fmt.Errorf("%s: %d of %d adds after %v", job.Subject, added.Load(), job.N, job.Timeout))
	}
	for !run.hasSynced() {
		select {
		case <-timeout.C:
			return fail(fmt.Errorf("%s: every add seen but not synced after %v", job.Subject, job.Timeout))
		case <-time.After(time.Millisecond):
		}
	}
	m.stop()
	if cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	if total != nil {
		res.PeakTotal = total.finish()
	}
	res.GCs, res.Missed = gcCycles()-cycles0, s.stop()
	res.CPU, res.Wall = m.cpuDelta, m.elapsed
	live := liveHeap()
	res.LiveBytes = live - base
	res.PeakBytes = max(s.peak.Load(), live) - base
	if heapProfile != "" {
		if err := writeHeapProfile(heapProfile); err != nil {
			return fail(err)
		}
	}
	if n := run.cached(); n != job.N {
		return fail(fmt.Errorf("%s: %d objects cached, want %d", job.Subject, n, job.N))
	}
	if added.Load() != int64(job.N) {
		return fail(fmt.Errorf("%s: %d adds, want %d", job.Subject, added.Load(), job.N))
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	res.MaxRSS = ru.Maxrss << 10
	res.Lists, res.Watches = counter.lists.Load(), counter.watches.Load()
	if len(job.Refs) > 0 {
		if run.read == nil {
			return fail(fmt.Errorf("%s reads nothing", job.Subject))
		}
		steady, err := realSteady(ctx, job, run, counter, base)
		if err != nil {
			return fail(err)
		}
		res.Steady = steady
	}
	if run.stats != nil {
		res.Stats = run.stats()
	}
	runtime.KeepAlive(run)
	return res
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("heap").WriteTo(f, 0)
}

// totalSampler records the peak of the memory the runtime holds (what
// GOMEMLIMIT bounds: every memory class but the released heap).
type totalSampler struct {
	stop, done chan struct{}
	over       chan struct{} // closed at the first sample above limit
	limit      int64
	peak       int64
}

func sampleTotal(every time.Duration, limit int64) *totalSampler {
	s := &totalSampler{stop: make(chan struct{}), done: make(chan struct{}), over: make(chan struct{}), limit: limit}
	ss := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			metrics.Read(ss)
			held := int64(ss[0].Value.Uint64() - ss[1].Value.Uint64())
			if held > s.limit && s.peak <= s.limit {
				close(s.over)
			}
			s.peak = max(s.peak, held)
			select {
			case <-t.C:
			case <-s.stop:
				return
			}
		}
	}()
	return s
}

func (s *totalSampler) finish() int64 {
	close(s.stop)
	<-s.done
	return s.peak
}

func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// gcSampler reads the live heap at the end of every garbage collection
// cycle: a finalizer on a sentinel runs once after each cycle that found
// the sentinel unreachable, samples, and arms a new sentinel.
type gcSampler struct {
	peak    atomic.Int64
	stopped atomic.Bool
	mu      sync.Mutex
	last    uint64 // the cycle count at the last sample
	missed  uint64
}

// sentinel is large enough not to be a tiny allocation (whose finalizers
// may never run).
type sentinel struct {
	_ [4]*int
}

func newGCSampler() *gcSampler {
	s := &gcSampler{last: gcCycles()}
	s.arm()
	return s
}

func (s *gcSampler) arm() {
	x := &sentinel{}
	runtime.SetFinalizer(x, func(*sentinel) {
		s.sample()
		if !s.stopped.Load() {
			s.arm()
		}
	})
}

func (s *gcSampler) sample() {
	ss := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(ss)
	live := int64(ss[0].Value.Uint64())
	for {
		p := s.peak.Load()
		if live <= p || s.peak.CompareAndSwap(p, live) {
			break
		}
	}
	s.mu.Lock()
	if c := ss[1].Value.Uint64(); c > s.last+1 {
		s.missed += c - s.last - 1
	}
	s.last = ss[1].Value.Uint64()
	s.mu.Unlock()
}

// stop takes a last sample and returns the number of cycles missed.
func (s *gcSampler) stop() uint64 {
	s.sample()
	s.stopped.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.missed
}
