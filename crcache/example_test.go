package crcache_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/listwatch/listwatch/crcache"
	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
)

// A manager whose cache is listwatch's: one line, NewCache. Its client
// reads pods from the cache, decoded by restsource without their
// managedFields.
func Example() {
	ctx, cancel := context.WithCancel(context.Background()) //lint:allow-background an Example has no test context
	defer cancel()
	// An in-memory apiserver standing in for a cluster.
	srv, _ := fake.NewServer(fake.Options{FieldManager: "kubectl"})
	_, _ = srv.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-0"}})
	hs := httptest.NewServer(fakeapi.Handler(srv, fakeapi.Options{ReportError: func(error) {}}))
	defer hs.Close()
	cfg := &rest.Config{Host: hs.URL}

	mgr, err := ctrl.NewManager(cfg, manager.Options{
		NewCache: crcache.New,

		// For the in-memory apiserver, which has no discovery endpoint;
		// leave both out with a real cluster's config.
		MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return mapper(), nil },
		Metrics:        metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan error)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		fmt.Println("not synced")
		return
	}
	var pod corev1.Pod
	if err := mgr.GetClient().Get(ctx, client.ObjectKey{Namespace: "default", Name: "web-0"}, &pod); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s/%s, %d managedFields entries\n", pod.Namespace, pod.Name, len(pod.ManagedFields))
	cancel()
	if err := <-done; err != nil {
		fmt.Println(err)
	}
	// Output:
	// default/web-0, 0 managedFields entries
}
