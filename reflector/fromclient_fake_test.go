package reflector_test

import (
	"context"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/watchlist"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
)

// wrappedPods is a test's wrapper of a typed client, as
// kube-controller-manager's tests write them.
type wrappedPods struct{ typedcorev1.PodInterface }

// FromClient over client-go's fake clientset lists and watches, as
// client-go's informers over the fake do: the README's quick start in a
// test with the fake clientset waited for ever on a streaming list the
// fake never ends. A real clientset's client keeps streaming lists.
func TestFromClientOverTheFakeClientset(t *testing.T) {
	fake := k8sfake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}})
	real, err := kubernetes.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		c    reflector.Client[*corev1.PodList]
		want bool
	}{
		"fake":         {fake.CoreV1().Pods(""), true},
		"wrapped fake": {wrappedPods{fake.CoreV1().Pods("")}, true},
		"real":         {real.CoreV1().Pods(""), false},
	} {
		if got := watchlist.DoesClientNotSupportWatchListSemantics(reflector.FromClient(tc.c)); got != tc.want {
			t.Errorf("%s: declares no streaming lists: %v, want %v", name, got, tc.want)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		inf, err := informer.New(informer.Options[*corev1.Pod]{Source: reflector.FromClient(fake.CoreV1().Pods(""))})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = inf.Run(ctx) }()
		defer func() { cancel(); <-done }()
		if err := inf.WaitForSync(ctx); err != nil {
			t.Fatal(err)
		}
		if _, ok := inf.Reader().Namespace("ns").Get("a"); !ok {
			t.Fatal("the fake's pod is not in the cache")
		}
	})
}
