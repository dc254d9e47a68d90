//go:build e2e

package bench

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/internal/testapiserver"
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
	srv, err := testapiserver.Start(ctx, b, testapiserver.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop()
	cs := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	const ns = "bench"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
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
	p := makePod(i, false)
	p.Namespace, p.Name, p.GenerateName = "bench", "pod-"+strconv.Itoa(i)+"-"+strconv.FormatInt(time.Now().UnixNano(), 36), ""
	p.UID, p.ResourceVersion, p.CreationTimestamp = "", "", metav1.Time{}
	p.OwnerReferences = nil
	p.Status = corev1.PodStatus{}
	p.Spec.ServiceAccountName = "default"
	return p
}
