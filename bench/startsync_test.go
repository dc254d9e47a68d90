package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// startSyncObjects is how many ConfigMaps BenchmarkStartSync creates.
const startSyncObjects = 100

// BenchmarkStartSync is issue 50's speed goal: the wall time of what a
// controller's test does first, side by side on the two servers it can
// run against. Each iteration starts a server, creates a namespace and
// 100 ConfigMaps in it through a typed clientset, syncs a client-go shared
// informer factory's ConfigMap informer on them, and stops everything:
//
//   - fakeapi: a fake.Server served over REST by fakeapi.Serve (loopback);
//   - kube-apiserver: kube-apiserver and etcd started by
//     internal/testing/testapiserver, the project's envtest (binaries
//     built once by hack/build-apiserver.sh and cached).
//
// Both clients run unthrottled (QPS -1), as testapiserver's configs do.
// ns/op is the figure; fakeapi ÷ kube-apiserver is the ratio
// docs/benchmarks.md records:
//
//	cd bench && go test -run '^$' -bench '^BenchmarkStartSync$' -benchtime 5x -count 3 .
func BenchmarkStartSync(b *testing.B) {
	b.Run("fakeapi", func(b *testing.B) {
		for b.Loop() {
			ctx, cancel := context.WithCancel(b.Context())
			srv, err := fake.NewServer(fake.Options{RequireNamespaces: true})
			if err != nil {
				b.Fatal(err)
			}
			cfg, err := fakeapi.Serve(ctx, srv, fakeapi.Options{})
			if err != nil {
				b.Fatal(err)
			}
			cfg.QPS = -1
			ns := "bench"
			if err := srv.CreateNamespace(ctx, ns); err != nil {
				b.Fatal(err)
			}
			createAndSync(b, ctx, cfg, ns)
			srv.CloseWatches(fake.GVR{})
			cancel()
		}
	})
	b.Run("kube-apiserver", func(b *testing.B) {
		for b.Loop() {
			ctx := b.Context()
			srv, err := testapiserver.Start(ctx, b, testapiserver.Options{})
			if err != nil {
				b.Fatal(err)
			}
			cfg := srv.AdminConfig()
			cs := kubernetes.NewForConfigOrDie(cfg)
			ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{})
			if err != nil {
				b.Fatal(err)
			}
			createAndSync(b, ctx, cfg, ns.Name)
			srv.Stop()
		}
	})
}

// createAndSync creates startSyncObjects ConfigMaps in ns and syncs an
// informer on them; it returns with the informer stopped.
func createAndSync(b *testing.B, ctx context.Context, cfg *rest.Config, ns string) {
	b.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer hc.CloseIdleConnections() // no connection outlives the iteration (goleak)
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		b.Fatal(err)
	}
	for i := range startSyncObjects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i)}, Data: map[string]string{"k": "v"}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	stop := make(chan struct{})
	factory.Start(stop)
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	// WaitFor reacts at once; WaitForCacheSync would poll every 100 ms,
	// which alone is most of the fake's time.
	if !cache.WaitFor(syncCtx, "", inf.HasSyncedChecker()) {
		b.Fatal("informer did not sync")
	}
	if n := len(inf.GetStore().ListKeys()); n != startSyncObjects {
		b.Fatalf("informer holds %d ConfigMaps, want %d", n, startSyncObjects)
	}
	close(stop)
	factory.Shutdown()
}
