package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// BenchmarkRealMemory (issue 30) measures what caching costs on a real
// kube-apiserver: it starts one (internal/testing/testapiserver), fills it with
// BENCH_REAL_N realistic objects of each kind, written the way a cluster
// writes them (real_pods_test.go, real_configmaps_test.go,
// real_secrets_test.go: BENCH_REAL_KINDS=secrets), and then has
// every subject (real_subjects_test.go) sync each kind in a process of its
// own, in BENCH_REAL_ROUNDS rounds that alternate the subjects (the order
// reverses every round), so that the machine's load hits every subject
// alike and heaps never mix. Per subject, kind, encoding and list mode it
// reports the medians of:
//
//   - B/obj: the live heap after the sync minus the live heap before the
//     subject started, per cached object;
//   - peak-MB: the peak live heap during the sync above that base, sampled
//     at the end of every collection cycle, in a child run with
//     GOGC=BENCH_REAL_PEAK_GOGC (default 10: a cycle every 10% of growth,
//     so the samples are close together);
//   - cpu-ms and sync-ms: the child's CPU (user+sys, every goroutine and
//     the collector) and wall time from starting the subject until its
//     handler has seen every add and it reports synced, in a child with the
//     default GOGC;
//
// and each figure divided by the subject's baseline's (x-B/obj, x-peak,
// x-cpu). One op is the whole measurement: run it with -benchtime 1x.
//
//	GOMAXPROCS=2 go test -run '^$' -bench '^BenchmarkRealMemory$' -benchtime 1x -timeout 3h ./bench/
//
// Environment: BENCH_REAL_N (20000), BENCH_REAL_KINDS (pods,configmaps; or secrets),
// BENCH_REAL_SUBJECTS (every registered one), BENCH_REAL_ENCODINGS
// (protobuf,json), BENCH_REAL_LISTS (stream,paged), BENCH_REAL_ROUNDS (3),
// BENCH_REAL_PASSES (cpu,peak), BENCH_REAL_OUT (a file for the table).
// BENCH_REAL_SERVE=file fills a server, writes how to reach it to file
// and keeps it until the file is removed; BENCH_REAL_CONNECT=file then
// measures against that server (several runs, one corpus), and with
// BENCH_REAL_GROW=1 first writes what it lacks of BENCH_REAL_N.
// It is never part of make test (a benchmark, and it skips under -short).
func BenchmarkRealMemory(b *testing.B) {
	n := envInts(b, "BENCH_REAL_N", []int{20000})[0]
	kinds := envList("BENCH_REAL_KINDS", []string{"pods", "configmaps"})
	cfg := realServer(b, kinds, n)
	if cfg == nil {
		return
	}
	var rows []realRow
	for _, kind := range kinds {
		rows = append(rows, realCombos(b, kind, n)...)
	}
	runRealRounds(b, cfg, rows)
	reportReal(b, rows)
}

// realServer returns the admin config of a kube-apiserver holding n
// objects of each kind: with BENCH_REAL_CONNECT, the one a run with
// BENCH_REAL_SERVE left running; otherwise a new one, filled. With
// BENCH_REAL_SERVE=file it writes the connection to file and serves
// until the file is removed, then returns nil.
func realServer(b *testing.B, kinds []string, n int) *rest.Config {
	if conn := os.Getenv("BENCH_REAL_CONNECT"); conn != "" {
		raw, err := os.ReadFile(conn)
		if err != nil {
			b.Fatal(err)
		}
		var c realConn
		if err := json.Unmarshal(raw, &c); err != nil {
			b.Fatal(err)
		}
		cfg := &rest.Config{Host: c.Host, BearerToken: c.Token, TLSClientConfig: rest.TLSClientConfig{CAData: c.CAData}, QPS: -1}
		for _, k := range kinds {
			if c.N[k] >= n {
				continue
			}
			if os.Getenv("BENCH_REAL_GROW") == "" {
				b.Fatalf("the server at %s holds %d %s, not %d (BENCH_REAL_GROW=1 writes the rest)", c.Host, c.N[k], k, n)
			}
			start := time.Now()
			hc, err := rest.HTTPClientFor(cfg)
			if err != nil {
				b.Fatal(err)
			}
			cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
			if err != nil {
				b.Fatal(err)
			}
			err = writeRealCorpus(b.Context(), cfg, cs, k, c.N[k], n)
			hc.CloseIdleConnections() // no connection outlives the benchmark (goleak)
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("wrote %s %d to %d in %v", k, c.N[k], n, time.Since(start).Round(time.Second))
			c.N[k] = n
			raw, _ := json.Marshal(c)
			if err := os.WriteFile(conn, raw, 0o600); err != nil {
				b.Fatal(err)
			}
		}
		return cfg
	}
	// BENCH_REAL_APISERVER_ARGS: more kube-apiserver flags, such as
	// --watch-cache-sizes=pods#0 for a server grown past what its watch
	// cache can hold in this machine's memory.
	srv, err := testapiserver.Start(b.Context(), b, testapiserver.Options{ExtraAPIServerArgs: strings.Fields(os.Getenv("BENCH_REAL_APISERVER_ARGS"))})
	if err != nil {
		b.Fatal(err)
	}
	cfg := srv.AdminConfig()
	cs := kubernetes.NewForConfigOrDie(cfg)
	conn := realConn{Host: cfg.Host, Token: cfg.BearerToken, CAData: cfg.CAData, N: map[string]int{}}
	for _, kind := range kinds {
		start := time.Now()
		if err := writeRealCorpus(b.Context(), cfg, cs, kind, 0, n); err != nil {
			b.Fatal(err)
		}
		conn.N[kind] = n
		b.Logf("wrote %d %s in %v", n, kind, time.Since(start).Round(time.Second))
	}
	if file := os.Getenv("BENCH_REAL_SERVE"); file != "" {
		raw, _ := json.Marshal(conn)
		if err := os.WriteFile(file, raw, 0o600); err != nil {
			b.Fatal(err)
		}
		b.Logf("serving %s until %s is removed", cfg.Host, file)
		for {
			if _, err := os.Stat(file); err != nil {
				return nil
			}
			select {
			case <-b.Context().Done():
				return nil
			case <-time.After(time.Second):
			}
		}
	}
	return cfg
}

// realConn is how to reach a server that BENCH_REAL_SERVE left running,
// and what it holds.
type realConn struct {
	Host, Token string
	CAData      []byte
	N           map[string]int // objects written, by kind
}

// realRow is one subject caching one kind one way, with its measurements.
type realRow struct {
	kind, encoding, subject string
	paged                   bool
	n                       int
	selector                string
	cpu, peak               []realResult // per round, by pass
}

func (r *realRow) name() string {
	list := "stream"
	if r.paged {
		list = "paged"
	}
	return r.kind + "/" + r.encoding + "/" + list + "/" + r.subject
}

// realCombos returns the rows of one kind: every selected subject,
// encoding and list mode, for n objects.
func realCombos(b *testing.B, kind string, n int) []realRow {
	var rows []realRow
	subjects := envList("BENCH_REAL_SUBJECTS", realSubjectNames(kind))
	for _, enc := range envList("BENCH_REAL_ENCODINGS", []string{"protobuf", "json"}) {
		for _, list := range envList("BENCH_REAL_LISTS", []string{"stream", "paged"}) {
			for _, s := range subjects {
				sub, ok := realSubjects[s]
				if !ok {
					b.Fatalf("unknown subject %q", s)
				}
				if !slices.Contains(sub.kinds, kind) || sub.streamOnly && list == "paged" {
					continue
				}
				rows = append(rows, realRow{kind: kind, encoding: enc, subject: s, paged: list == "paged", n: n, selector: realSelector(b, n)})
			}
		}
	}
	return rows
}

// runRealRounds runs every row's children, round after round.
func runRealRounds(b *testing.B, cfg *rest.Config, rows []realRow) {
	rounds := envInts(b, "BENCH_REAL_ROUNDS", []int{3})[0]
	passes := envList("BENCH_REAL_PASSES", []string{"cpu", "peak"})
	peakGOGC := envInts(b, "BENCH_REAL_PEAK_GOGC", []int{10})[0]
	dir := b.TempDir()
	for round := range rounds {
		order := make([]int, len(rows))
		for i := range order {
			order[i] = i
		}
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, i := range order {
			r := &rows[i]
			for _, pass := range passes {
				gogc := "100"
				if pass == "peak" {
					gogc = strconv.Itoa(peakGOGC)
				}
				res, err := runRealChild(b, cfg, dir, r, gogc, nil)
				if err != nil {
					b.Fatalf("%s (%s pass, round %d): %v", r.name(), pass, round+1, err)
				}
				if pass == "peak" {
					r.peak = append(r.peak, res)
				} else {
					r.cpu = append(r.cpu, res)
				}
			}
		}
		b.Logf("round %d of %d done", round+1, rounds)
	}
}

var realChildSeq atomic.Int64

// runRealChild runs one child for row r with GOGC=gogc and extra
// environment variables, and returns its result.
func runRealChild(b *testing.B, cfg *rest.Config, dir string, r *realRow, gogc string, env []string) (realResult, error) {
	return runRealJobChild(b, dir, realJob{Host: cfg.Host, Token: cfg.BearerToken, CAData: cfg.CAData, Subject: r.subject, Kind: r.kind,
		Encoding: r.encoding, Paged: r.paged, Selector: r.selector, N: r.n, Timeout: 20 * time.Minute}, gogc, env)
}

// runRealJobChild runs job in a child with GOGC=gogc and env.
func runRealJobChild(b *testing.B, dir string, job realJob, gogc string, env []string) (realResult, error) {
	seq := strconv.FormatInt(realChildSeq.Add(1), 10)
	job.Out = filepath.Join(dir, "result-"+seq+".json")
	raw, _ := json.Marshal(job)
	jobFile := filepath.Join(dir, "job-"+seq+".json")
	if err := os.WriteFile(jobFile, raw, 0o600); err != nil {
		return realResult{}, err
	}
	cmd := exec.CommandContext(b.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), realJobEnv+"="+jobFile, "GOGC="+gogc)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	var res realResult
	if raw, rerr := os.ReadFile(job.Out); rerr == nil {
		_ = json.Unmarshal(raw, &res)
	}
	if err != nil || res.Err != "" {
		return res, fmt.Errorf("child: %v %s\n%s", err, res.Err, tail(string(out), 2000))
	}
	return res, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// realSelector selects the first n objects of the corpus (a whole number
// of batches, or all of them below one batch).
func realSelector(b *testing.B, n int) string {
	if n < realBatchSize {
		return realBatchLabel
	}
	if n%realBatchSize != 0 {
		b.Fatalf("%d objects are not a whole number of batches of %d", n, realBatchSize)
	}
	batches := make([]string, n/realBatchSize)
	for i := range batches {
		batches[i] = strconv.Itoa(i)
	}
	return realBatchLabel + " in (" + strings.Join(batches, ",") + ")"
}

// writeRealCorpus writes objects [from, n) of kind with 32 concurrent
// writers, creating their namespaces and service accounts first.
func writeRealCorpus(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, kind string, from, n int) error {
	var jobs []func(context.Context) error
	namespaces := map[string]bool{}
	now := time.Now()
	switch kind {
	case "pods":
		for i, tr := range realPodsOfTemplates(n)[from:] {
			i += from
			tp := realTemplateOf(tr[0])
			namespaces[tp.ns] = true
			jobs = append(jobs, func(ctx context.Context) error { return writeRealPod(ctx, cs, tp, tr[1], i, now) })
		}
	case "configmaps":
		for i, cm := range realConfigMaps(n)[from:] {
			i += from
			namespaces[cm.Namespace] = true
			jobs = append(jobs, func(ctx context.Context) error { return writeRealConfigMap(ctx, cs, cm, i) })
		}
	case "secrets":
		for i, s := range realSecrets(n)[from:] {
			i += from
			namespaces[s.s.Namespace] = true
			jobs = append(jobs, func(ctx context.Context) error { return writeRealSecret(ctx, cs, s, i) })
		}
	case "applications":
		namespaces[applicationsNS] = true
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return err
		}
		defer hc.CloseIdleConnections() // no connection outlives the benchmark (goleak)
		dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
		if err != nil {
			return err
		}
		res, err := installApplications(ctx, dyn)
		if err != nil {
			return err
		}
		for _, a := range realApplications(n)[from:] {
			jobs = append(jobs, func(ctx context.Context) error { return writeRealApplication(ctx, res, a) })
		}
	default:
		return fmt.Errorf("unknown kind %q", kind)
	}
	var nsJobs []func(context.Context) error
	for ns := range namespaces {
		nsJobs = append(nsJobs, func(ctx context.Context) error { return ensureRealNamespace(ctx, cs, ns) })
	}
	if err := runParallel(ctx, 32, nsJobs); err != nil {
		return err
	}
	return runParallel(ctx, 32, jobs)
}

// ensureRealNamespace creates ns and its default service account (which
// the ServiceAccount admission plugin requires of a pod), unless they
// exist.
func ensureRealNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
		return err
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
		return err
	}
	return nil
}

// runParallel runs jobs on workers goroutines and returns the first error.
func runParallel(ctx context.Context, workers int, jobs []func(context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(jobs) || ctx.Err() != nil {
					return
				}
				if err := jobs[i](ctx); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}
