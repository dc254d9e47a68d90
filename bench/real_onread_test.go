package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	lwcrcache "github.com/listwatch/listwatch/crcache"
)

// Issue 48's scenario: a controller whose custom resources each reference
// one Secret and read it on every reconcile, in a cluster of many Secrets
// it never reads (Helm releases, TLS, pull secrets, app secrets:
// realSecrets). Three subjects, each in a child of its own:
//
//   - onread-cr: controller-runtime's default cache (a whole-Secret
//     informer; client.Get from it);
//   - onread-handbuilt: the hand-built way, as cert-manager's
//     SecretsFilteredCaching does for unlabelled Secrets: a metadata-only
//     informer (controller-runtime's, for the handlers) and a live GET
//     per read through the uncached client;
//   - onread-listwatch: crcache with Options.OnRead for Secrets (budget
//     64 MiB): metadata for every Secret, whole ones held once read.
//
// Each syncs, then reads every reference Rounds times (one round a
// reconcile of every custom resource); between rounds, through a client of
// its own (not counted), it changes 1% of the referenced Secrets' data
// and points 1% of the references at other Secrets, the same changes in
// every subject. At the end every reference is read once more after the
// caches have caught up and the outcome (each reference's data) hashed:
// the three must agree.
//
//	BENCH_ONREAD_N=50000 BENCH_ONREAD_REFS=500 go test ./bench -run XXX -bench BenchmarkRealOnRead -benchtime 1x -timeout 60m
func BenchmarkRealOnRead(b *testing.B) {
	n := envInts(b, "BENCH_ONREAD_N", []int{50000})[0]
	refs := envInts(b, "BENCH_ONREAD_REFS", []int{500})[0]
	rounds := envInts(b, "BENCH_ONREAD_ROUNDS", []int{20})[0]
	cfg := realServer(b, []string{"secrets"}, n)
	if cfg == nil {
		return
	}
	keys := realRefs(n, refs)
	dir := b.TempDir()
	subjects := envList("BENCH_ONREAD_SUBJECTS", []string{"onread-cr", "onread-handbuilt", "onread-listwatch"})
	results := map[string]realResult{}
	for _, s := range subjects {
		res, err := runRealJobChild(b, dir, realJob{Host: cfg.Host, Token: cfg.BearerToken, CAData: cfg.CAData, Subject: s, Kind: "secrets",
			Encoding: "protobuf", N: n, Timeout: 20 * time.Minute, Refs: keys, Rounds: rounds}, "100", nil)
		if err != nil {
			b.Fatalf("%s: %v", s, err)
		}
		results[s] = res
	}
	reportOnRead(b, subjects, results)
}

// realRefs picks refs keys of the n-Secret corpus, spread over it: TLS
// and app Secrets, what a custom resource references (never a Helm
// release record).
func realRefs(n, refs int) []string {
	var pool []string
	for _, s := range realSecrets(n) {
		if s.s.Type != "helm.sh/release.v1" {
			pool = append(pool, s.s.Namespace+"/"+s.s.Name)
		}
	}
	out := make([]string, 0, refs)
	for i := 0; i < len(pool) && len(out) < refs; i += max(1, len(pool)/refs) {
		out = append(out, pool[i])
	}
	return out
}

// realSteadyResult is what the reads after the sync measured. Round 1
// is the warm-up (every reference read for the first time); the steady
// state is the rounds after it.
type realSteadyResult struct {
	Reads int64
	// ReadP50 and ReadP99 are over every read of the steady state;
	// HeldP50 and HeldP99 over those of an object read in the round
	// before and not changed since (a cache holds it).
	ReadP50, ReadP99, HeldP50, HeldP99 time.Duration
	CPU, Wall                          time.Duration
	// WarmupRequests counts the subject's requests (every verb but
	// watches) during round 1, Requests those of the steady state,
	// Watches the watches it opened during the reads.
	WarmupRequests, Requests, Watches int64
	// LiveBytes is the live heap after the reads, minus the base.
	LiveBytes int64
	// Outcome hashes every reference's data at the end.
	Outcome string
}

// realSteady runs the reads of job.Refs after the sync.
func realSteady(ctx context.Context, job realJob, run *realRun, counter *requestCounter, base int64) (*realSteadyResult, error) {
	writer := &rest.Config{Host: job.Host, BearerToken: job.Token, TLSClientConfig: rest.TLSClientConfig{CAData: job.CAData}, QPS: -1,
		WarningHandler: rest.NoWarnings{}}
	cs, err := kubernetes.NewForConfig(writer)
	if err != nil {
		return nil, err
	}
	refs := slices.Clone(job.Refs)
	rng := rand.New(rand.NewPCG(48, 1))
	res := &realSteadyResult{}
	watches0 := counter.watches.Load()
	var all, held []time.Duration
	changed := map[string]bool{} // keys changed or newly referenced since the last round
	for round := range job.Rounds {
		lists0 := counter.lists.Load()
		m := startMeter()
		for _, k := range refs {
			ns, name, _ := strings.Cut(k, "/")
			start := time.Now()
			if _, _, err := run.read(ctx, ns, name); err != nil {
				return nil, fmt.Errorf("round %d: read %s: %w", round, k, err)
			}
			d := time.Since(start)
			if round > 0 {
				all = append(all, d)
				if !changed[k] {
					held = append(held, d)
				}
			}
		}
		m.stop()
		res.Reads += int64(len(refs))
		if round == 0 {
			res.WarmupRequests = counter.lists.Load() - lists0
		} else {
			res.Requests += counter.lists.Load() - lists0
			res.CPU, res.Wall = res.CPU+m.cpuDelta, res.Wall+m.elapsed
		}
		// Change 1% of the referenced Secrets' data and point 1% of the
		// references at other Secrets of the pool.
		clear(changed)
		for range max(1, len(refs)/100) {
			k := refs[rng.IntN(len(refs))]
			ns, name, _ := strings.Cut(k, "/")
			s, err := cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			if s.Data == nil {
				s.Data = map[string][]byte{}
			}
			s.Data["rotated"] = []byte(fmt.Sprint("round-", round))
			if _, err := cs.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
				return nil, err
			}
			changed[k] = true
		}
		for range max(1, len(refs)/100) {
			i, j := rng.IntN(len(refs)), rng.IntN(len(refs))
			refs[i] = job.Refs[j]
			changed[refs[i]] = true
		}
	}
	res.Watches = counter.watches.Load() - watches0
	p := func(d []time.Duration, q int) time.Duration {
		if len(d) == 0 {
			return 0
		}
		slices.Sort(d)
		return d[len(d)*q/100]
	}
	res.ReadP50, res.ReadP99, res.HeldP50, res.HeldP99 = p(all, 50), p(all, 99), p(held, 50), p(held, 99)
	res.LiveBytes = liveHeap() - base
	// The outcome, once every read has caught up with the server.
	h := sha256.New()
	sort.Strings(refs)
	for _, k := range refs {
		ns, name, _ := strings.Cut(k, "/")
		want, err := cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		var data map[string][]byte
		for try := 0; ; try++ {
			rv, d, err := run.read(ctx, ns, name)
			if err != nil {
				return nil, err
			}
			if rv == want.ResourceVersion {
				data = d
				break
			}
			if try > 1000 {
				return nil, fmt.Errorf("%s: read rv %s, the server's is %s", k, rv, want.ResourceVersion)
			}
			time.Sleep(10 * time.Millisecond)
		}
		keys := make([]string, 0, len(data))
		for dk := range data {
			keys = append(keys, dk)
		}
		sort.Strings(keys)
		fmt.Fprintln(h, k)
		for _, dk := range keys {
			fmt.Fprintf(h, "%s=%x\n", dk, sha256.Sum256(data[dk]))
		}
	}
	res.Outcome = hex.EncodeToString(h.Sum(nil))[:16]
	return res, nil
}

func init() {
	registerRealSubject(realSubject{name: "onread-cr", kinds: []string{"onread"}, start: startOnRead("cr")})
	registerRealSubject(realSubject{name: "onread-handbuilt", kinds: []string{"onread"}, start: startOnRead("handbuilt")})
	registerRealSubject(realSubject{name: "onread-listwatch", kinds: []string{"onread"}, start: startOnRead("listwatch")})
}

// startOnRead runs one of the scenario's subjects.
func startOnRead(mode string) func(ctx context.Context, env realEnv) (*realRun, error) {
	return func(ctx context.Context, env realEnv) (*realRun, error) {
		cfg := contentConfig(env.cfg, env.encoding)
		cfg.WarningHandler = rest.NoWarnings{} // the corpus's certificates are random bytes
		opts := crcache.Options{Scheme: scheme.Scheme}
		newCache := crcache.New
		var watched client.Object = &corev1.Secret{}
		if mode != "cr" {
			m := &metav1.PartialObjectMetadata{}
			m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
			watched = m
		}
		if mode == "listwatch" {
			newCache = lwcrcache.NewWithOptions(lwcrcache.Options{OnRead: []lwcrcache.OnRead{{Object: &corev1.Secret{}, Budget: 64 << 20, IdleAfter: 10 * time.Minute}}})
		}
		c, err := newCache(cfg, opts)
		if err != nil {
			return nil, err
		}
		direct, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { _ = c.Start(ctx) })
		inf, err := c.GetInformer(ctx, watched, crcache.BlockUntilSynced(false))
		if err != nil {
			cancel()
			wg.Wait()
			return nil, err
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) { env.added() }}); err != nil {
			cancel()
			wg.Wait()
			return nil, err
		}
		st := inf.(interface{ GetStore() cache.Store })
		reader := client.Reader(c)
		if mode == "handbuilt" {
			reader = direct
		}
		run := &realRun{hasSynced: inf.HasSynced, cached: func() int { return len(st.GetStore().ListKeys()) },
			stop: func() { cancel(); wg.Wait() },
			read: func(ctx context.Context, ns, name string) (string, map[string][]byte, error) {
				var s corev1.Secret
				if err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
					return "", nil, err
				}
				return s.ResourceVersion, s.Data, nil
			}}
		if mode == "listwatch" {
			run.stats = func() map[string]float64 {
				s, _ := lwcrcache.OnReadStats(c, &corev1.Secret{})
				return map[string]float64{"held": float64(s.Held), "heldBytes": float64(s.HeldBytes), "metadataBytes": float64(s.MetadataBytes),
					"fetches": float64(s.Fetches), "hits": float64(s.Hits), "reads": float64(s.Reads)}
			}
		}
		return run, nil
	}
}

// reportOnRead logs the scenario's table and reports its metrics.
func reportOnRead(b *testing.B, subjects []string, res map[string]realResult) {
	var tbl strings.Builder
	tbl.WriteString("| subject | live heap after sync MiB | ÷ cr | ÷ hand-built | after reads MiB | ÷ cr | ÷ hand-built | sync CPU ms | sync ms | warm-up requests | steady requests | ÷ hand-built | read p50 / p99 | held read p50 / p99 | steady CPU ms | outcome |\n")
	tbl.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	mib := func(x int64) float64 { return float64(x) / (1 << 20) }
	ratio := func(x, y int64) string {
		if y == 0 {
			return ""
		}
		return fmt.Sprintf("%.3f×", float64(x)/float64(y))
	}
	cr, hb := res["onread-cr"], res["onread-handbuilt"]
	outcomes := map[string]bool{}
	for _, s := range subjects {
		r := res[s]
		st := r.Steady
		if st == nil {
			b.Fatalf("%s measured no reads", s)
		}
		var crSteady, hbSteady realSteadyResult
		if cr.Steady != nil {
			crSteady = *cr.Steady
		}
		if hb.Steady != nil {
			hbSteady = *hb.Steady
		}
		us := func(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1e3) }
		fmt.Fprintf(&tbl, "| %s | %.1f | %s | %s | %.1f | %s | %s | %d | %d | %d | %d | %s | %s / %s | %s / %s | %d | %s |\n", s,
			mib(r.LiveBytes), ratio(r.LiveBytes, cr.LiveBytes), ratio(r.LiveBytes, hb.LiveBytes),
			mib(st.LiveBytes), ratio(st.LiveBytes, crSteady.LiveBytes), ratio(st.LiveBytes, hbSteady.LiveBytes),
			r.CPU.Milliseconds(), r.Wall.Milliseconds(), st.WarmupRequests, st.Requests, ratio(st.Requests, hbSteady.Requests),
			us(st.ReadP50), us(st.ReadP99), us(st.HeldP50), us(st.HeldP99), st.CPU.Milliseconds(), st.Outcome)
		outcomes[st.Outcome] = true
		b.Run(s, func(b *testing.B) {
			b.ReportMetric(mib(r.LiveBytes), "sync-MiB")
			b.ReportMetric(mib(st.LiveBytes), "steady-MiB")
			b.ReportMetric(float64(st.Requests), "steady-requests")
			b.ReportMetric(float64(st.HeldP99.Nanoseconds()), "held-read-p99-ns")
			b.ReportMetric(float64(r.CPU.Milliseconds()), "sync-cpu-ms")
		})
		if r.Stats != nil {
			b.Logf("%s: %v", s, r.Stats)
		}
	}
	b.Logf("\n%s", tbl.String())
	if len(outcomes) != 1 {
		b.Errorf("the subjects' reconcile outcomes differ: %v", outcomes)
	}
}
