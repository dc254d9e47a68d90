package operator

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// benchSecrets is how many Secrets BenchmarkOperator10k reconciles.
const benchSecrets = 10_000

// BenchmarkOperator10k runs the digest operator against a real apiserver
// holding 10,000 Secrets, once with listwatch's informers and once with
// client-go's, and reports for each iteration: the wall time from starting
// the manager until every digest exists and is in the cache
// (reconcile-s); the process CPU from the start until the operator is
// idle, i.e. has also reconciled the events of its own writes (cpu-s); and
// the heap after GC with the idle manager still running, over the heap
// before it started (heap-MB). Each iteration gets a fresh namespace. Run with
// -benchtime=1x; skipped under -short.
func BenchmarkOperator10k(b *testing.B) {
	ctx := b.Context()
	// controller-runtime's sources log through its global logger.
	ctrllog.SetLogger(logr.Discard())
	server, err := testapiserver.Start(ctx, b, testapiserver.Options{})
	if err != nil {
		b.Fatal(err)
	}
	c := kubernetes.NewForConfigOrDie(server.AdminConfig())
	for _, impl := range impls {
		b.Run(string(impl), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				ns := benchNamespace(ctx, b, c)
				runtime.GC()
				runtime.GC()
				before := heapAlloc()
				cpu0 := cpuTime()
				start := time.Now()
				b.StartTimer()
				op, err := startOperator(Options{Config: server.AdminConfig(), Namespace: ns, Informers: impl, MaxConcurrentReconciles: 4}, logr.Discard())
				if err != nil {
					b.Fatal(err)
				}
				waitReconciled(ctx, b, op)
				b.StopTimer()
				elapsed := time.Since(start)
				waitQuiet(ctx, b, op)
				cpu := cpuTime() - cpu0
				runtime.GC()
				runtime.GC()
				heap := float64(int64(heapAlloc())-int64(before)) / (1 << 20)
				runtime.KeepAlive(op)
				if err := op.stopAndWait(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(elapsed.Seconds(), "reconcile-s")
				b.ReportMetric(cpu.Seconds(), "cpu-s")
				b.ReportMetric(heap, "heap-MB")
				b.ReportMetric(float64(op.counters.Reconciles.Load()), "reconciles")
			}
		})
	}
}

// benchNamespace creates a namespace holding benchSecrets Secrets.
func benchNamespace(ctx context.Context, b *testing.B, c kubernetes.Interface) string {
	ns, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-"}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	const workers = 16
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < benchSecrets; i += workers {
				s := newSecret(ns.Name, fmt.Sprintf("s-%05d", i), fmt.Sprint(i))
				if _, err := c.CoreV1().Secrets(ns.Name).Create(ctx, s, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return ns.Name
}

// waitReconciled returns once the operator has created every digest and
// its ConfigMap informer holds them all.
func waitReconciled(ctx context.Context, b *testing.B, op *running) {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Minute, true, func(context.Context) (bool, error) {
		if op.counters.Created.Load() < benchSecrets {
			return false, nil
		}
		inf := op.builtInformer("*v1.ConfigMap")
		return inf != nil && len(inf.GetStore().ListKeys()) >= benchSecrets, nil
	})
	if err != nil {
		b.Fatalf("reconciled %d of %d: %v", op.counters.Created.Load(), benchSecrets, err)
	}
}

// waitQuiet returns once no Reconcile has run for a second: the events of
// the operator's own writes have been handled and its queue is empty.
func waitQuiet(ctx context.Context, b *testing.B, op *running) {
	last, quiet := int64(-1), 0
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
		n := op.counters.Reconciles.Load()
		if n == last {
			quiet++
		} else {
			last, quiet = n, 0
		}
		return quiet >= 4, nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

func heapAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
