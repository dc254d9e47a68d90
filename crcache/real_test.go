package crcache_test

import (
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/listwatch/listwatch/crcache"
	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// On a real kube-apiserver (TLS, token authentication, protobuf), the
// probe reads controller-runtime's requests through the real transport
// chain: pods of one namespace and label are decoded by restsource (no
// fallback logged), equal to the server's without managedFields.
func TestRealAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real kube-apiserver")
	}
	srv, err := testapiserver.Start(t.Context(), t, testapiserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := srv.AdminConfig()
	cs := kubernetes.NewForConfigOrDie(cfg)
	for _, ns := range []string{"a", "b"} {
		if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// No controller-manager makes it; pod admission needs it.
		if _, err := cs.CoreV1().ServiceAccounts(ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Labels: map[string]string{"app": []string{"web", "db"}[i%2]}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			}
			if _, err := cs.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var fallbacks atomic.Int64
	c := startCache(t, crcache.NewWithOptions(crcache.Options{Logger: funcr.New(func(_, args string) {
		fallbacks.Add(1)
		t.Log(args)
	}, funcr.Options{Verbosity: 1})}), srv, cache.Options{
		DefaultNamespaces:    map[string]cache.Config{"a": {}},
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{"app": "web"}),
	}, false)
	ctx := t.Context()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("not synced")
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods); err != nil {
		t.Fatal(err)
	}
	if n := names(ptrs(pods.Items)); fmt.Sprint(n) != "[a/p0 a/p2]" {
		t.Fatalf("List = %v, want [a/p0 a/p2]", n)
	}
	for _, p := range pods.Items {
		want, err := cs.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(want.ManagedFields) == 0 {
			t.Fatal("the server wrote no managedFields")
		}
		want.ManagedFields = nil
		want.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
		if !reflect.DeepEqual(want, &p) {
			t.Fatalf("cached pod differs from the server's:\n got %+v\nwant %+v", &p, want)
		}
	}
	if fallbacks.Load() != 0 {
		t.Fatalf("%d informers fell back to controller-runtime's client", fallbacks.Load())
	}
	t.Run("custom resources", func(t *testing.T) { testCustomResources(t, srv) })
	t.Run("forbidden", func(t *testing.T) { testForbidden(t, srv) })
}
