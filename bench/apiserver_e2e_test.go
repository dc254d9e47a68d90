//go:build e2e

package bench

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// seenAt records when a library's handler first saw each pod name.
type seenAt struct {
	mu   sync.Mutex
	when map[string]time.Time // guarded by mu
}

func (s *seenAt) hit(p *corev1.Pod) {
	now := time.Now()
	s.mu.Lock()
	if _, ok := s.when[p.Name]; !ok {
		s.when[p.Name] = now
	}
	s.mu.Unlock()
}

func (s *seenAt) get(name string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.when[name]
	return t, ok
}

// BenchmarkAPIServerLatency (scenario 8, build tag e2e): both informers
// watch pods in one namespace of a real kube-apiserver (see
// docs/testing.md) while the benchmark creates pods one after the other.
// One op is one create; reported per library are the p50 and p99 delay
// from sending the create to the library's handler seeing the pod.
func BenchmarkAPIServerLatency(b *testing.B) {
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	srv, cs := benchServer(ctx, b)
	defer srv.Stop()
	pods := cs.CoreV1().Pods(ns)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) },
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return pods.Watch(ctx, o)
		},
	}
	seen := map[string]*seenAt{}
	for _, lib := range libs {
		seen[lib] = &seenAt{when: map[string]time.Time{}}
		run := start(b, lib, setup{lw: lw, handlers: []handler{{coalesce: true, fn: seen[lib].hit}}})
		defer run.stop()
		waitUntil(b, lib+" sync", time.Minute, run.hasSynced)
	}
	sent := make([]time.Time, b.N)
	names := make([]string, b.N)
	b.ResetTimer()
	for i := range b.N {
		p := apiserverPod(i)
		names[i] = p.Name
		sent[i] = time.Now()
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	for _, lib := range libs {
		var lat []time.Duration
		for i, name := range names {
			var t time.Time
			waitUntil(b, lib+" sees "+name, time.Minute, func() bool {
				var ok bool
				t, ok = seen[lib].get(name)
				return ok
			})
			lat = append(lat, t.Sub(sent[i]))
		}
		b.ReportMetric(float64(percentile(lat, 50).Nanoseconds()), lib+"-p50-ns")
		b.ReportMetric(float64(percentile(lat, 99).Nanoseconds()), lib+"-p99-ns")
	}
}

// apiserverPod is the corpus pod made creatable: no server-set fields.
func apiserverPod(i int) *corev1.Pod {
	p := objects.RealisticPod(i, objects.PlainPod)
	p.Namespace, p.Name, p.GenerateName = "bench", "pod-"+strconv.Itoa(i)+"-"+strconv.FormatInt(time.Now().UnixNano(), 36), ""
	p.UID, p.ResourceVersion, p.CreationTimestamp = "", "", metav1.Time{}
	p.OwnerReferences = nil
	p.Status = corev1.PodStatus{}
	p.Spec.ServiceAccountName = "default"
	return p
}

// countingLW counts the list and watch calls made through it.
type countingLW struct {
	cache.ListerWatcher
	lists, watches atomic.Int64
}

func (c *countingLW) List(o metav1.ListOptions) (runtime.Object, error) {
	c.lists.Add(1)
	return c.ListerWatcher.List(o)
}

func (c *countingLW) Watch(o metav1.ListOptions) (watch.Interface, error) {
	c.watches.Add(1)
	return c.ListerWatcher.Watch(o)
}

// BenchmarkAPIServerRestart (build tag e2e): each op starts a fresh
// informer of each library on the pods of one namespace of a real
// kube-apiserver, lets their watches live 15 s (watches live for minutes
// between restarts in a real cluster; 15 s is enough for both libraries to
// treat the close as one: client-go at least a second, listwatch
// longWatch), kills the apiserver (SIGKILL), starts it again on the same
// etcd and, as soon as it is ready, creates a pod. Reported per library:
// the median and worst delay from the server being ready to the handler
// seeing that pod, and the list and watch calls per restart (a streaming
// list is a watch call). The restarted server's watch cache starts at the
// current resource version, so the re-watch gets 410 Gone and both
// libraries list again; while the server is down both back off (client-go's
// 800 ms doubling, full jitter), so the delay is mostly where each one's
// backoff stood when the server came back (docs/operations.md, "When the
// server misbehaves").
func BenchmarkAPIServerRestart(b *testing.B) {
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	srv, cs := benchServer(ctx, b)
	defer srv.Stop()
	pods := cs.CoreV1().Pods(ns)
	lat := map[string][]time.Duration{}
	calls := map[string]int64{}
	b.ResetTimer()
	for i := range b.N {
		seen, lws, runs := map[string]*seenAt{}, map[string]*countingLW{}, map[string]*running{}
		for _, lib := range libs {
			seen[lib] = &seenAt{when: map[string]time.Time{}}
			lws[lib] = &countingLW{ListerWatcher: &cache.ListWatch{
				ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) },
				WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
					return pods.Watch(ctx, o)
				},
			}}
			runs[lib] = start(b, lib, setup{lw: lws[lib], handlers: []handler{{coalesce: true, fn: seen[lib].hit}}})
			waitUntil(b, lib+" sync", time.Minute, runs[lib].hasSynced)
		}
		time.Sleep(15 * time.Second)
		before := map[string]int64{}
		for _, lib := range libs {
			before[lib] = lws[lib].lists.Load() + lws[lib].watches.Load()
		}
		if err := srv.Restart(ctx); err != nil {
			b.Fatal(err)
		}
		ready := time.Now()
		p := apiserverPod(i)
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		for _, lib := range libs {
			var t time.Time
			waitUntil(b, lib+" sees "+p.Name, 2*time.Minute, func() bool {
				var ok bool
				t, ok = seen[lib].get(p.Name)
				return ok
			})
			lat[lib] = append(lat[lib], t.Sub(ready))
			calls[lib] += lws[lib].lists.Load() + lws[lib].watches.Load() - before[lib]
			runs[lib].stop()
		}
	}
	b.StopTimer()
	for _, lib := range libs {
		b.ReportMetric(float64(percentile(lat[lib], 50).Milliseconds()), lib+"-p50-ms")
		b.ReportMetric(float64(slices.Max(lat[lib]).Milliseconds()), lib+"-max-ms")
		b.ReportMetric(float64(calls[lib])/float64(b.N), lib+"-calls/op")
	}
}

// ns is the namespace of the e2e benchmarks' pods.
const ns = "bench"

// benchServer starts a real kube-apiserver with the namespace ns and its
// default service account; the caller stops it.
func benchServer(ctx context.Context, b *testing.B) (*testapiserver.Server, kubernetes.Interface) {
	srv, err := testapiserver.Start(ctx, b, testapiserver.Options{})
	if err != nil {
		b.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		srv.Stop()
		b.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		srv.Stop()
		b.Fatal(err)
	}
	return srv, cs
}
