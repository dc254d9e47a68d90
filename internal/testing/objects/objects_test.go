package objects_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"

	"github.com/listwatch/listwatch/internal/testing/objects"
)

func TestBuilders(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want runtime.Object
	}{
		{"bare pod", objects.Pod("ns", "a"), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}},
		{"pod", objects.Pod("", "a", objects.RV("7"), objects.Node("n1"), objects.Labels(map[string]string{"app": "web"})),
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "7", Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{NodeName: "n1"}}},
		{"bare configmap", objects.ConfigMap("ns", "a"), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}},
		{"configmap", objects.ConfigMap("ns", "a", objects.RV("3"), objects.Data("v", "0", "w", "1")),
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "3"},
				Data: map[string]string{"v": "0", "w": "1"}}},
		{"empty data", objects.ConfigMap("ns", "a", objects.Data()),
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}, Data: map[string]string{}}},
	} {
		if d := cmp.Diff(tc.want, tc.got); d != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.name, d)
		}
	}
}

func TestOptionOnTheWrongKindPanics(t *testing.T) {
	odd := []string{"k"} // a slice: staticcheck refuses an odd literal list
	for name, build := range map[string]func(){
		"Data on a pod":          func() { objects.Pod("ns", "a", objects.Data("k", "v")) },
		"Node on a configmap":    func() { objects.ConfigMap("ns", "a", objects.Node("n")) },
		"Data with an odd count": func() { objects.Data(odd...) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			build()
		}()
	}
}

func TestRealisticPodSize(t *testing.T) {
	for _, shape := range []objects.PodShape{objects.PlainPod, objects.ManagedPod} {
		b, err := json.Marshal(objects.RealisticPod(12345, shape))
		if err != nil {
			t.Fatal(err)
		}
		if lo, hi := 3000, 5500; len(b) < lo || len(b) > hi {
			t.Errorf("%+v: pod is %d bytes as JSON, want %d..%d", shape, len(b), lo, hi)
		}
	}
}

func TestRealisticPodShape(t *testing.T) {
	for i := range 12 {
		shape := objects.MixedShape(i)
		p := objects.RealisticPod(i, shape)
		if c, m := len(p.Spec.Containers), len(p.ManagedFields); c < 2 || c > 4 || m < 3 || m > 6 ||
			c != shape.Containers || m != shape.ManagedFields || len(p.Status.ContainerStatuses) != c {
			t.Fatalf("pod %d: %d containers (%d statuses), %d managedFields entries; want %+v within 2..4 and 3..6",
				i, c, len(p.Status.ContainerStatuses), m, shape)
		}
		if d := cmp.Diff(p, objects.RealisticPod(i, shape)); d != "" {
			t.Fatalf("pod %d differs between two calls:\n%s", i, d)
		}
	}
	if p := objects.RealisticPod(7, objects.PodShape{}); len(p.Spec.Containers) != 1 || len(p.ManagedFields) != 0 {
		t.Errorf("zero shape: %d containers, %d managedFields entries; want 1 and 0", len(p.Spec.Containers), len(p.ManagedFields))
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("RealisticPod with 5 containers did not panic")
			}
		}()
		objects.RealisticPod(0, objects.PodShape{Containers: 5})
	}()
}

// TestNoWatchList: the wrapper declares it cannot stream lists, and has
// the context methods exactly when what it wraps has them (a
// cache.ListWatch has both kinds).
func TestNoWatchList(t *testing.T) {
	var ctxLW cache.ListerWatcher = &cache.ListWatch{}
	var plain cache.ListerWatcher = plainLW{}
	for name, lw := range map[string]cache.ListerWatcher{"ListWatch": ctxLW, "context-free": plain} {
		wrapped := objects.NoWatchList(lw)
		if !watchlist.DoesClientNotSupportWatchListSemantics(wrapped) {
			t.Errorf("%s: the wrapper does not declare that it cannot stream lists", name)
		}
		_, lwCtx := lw.(cache.ListerWatcherWithContext)
		_, wrappedCtx := wrapped.(cache.ListerWatcherWithContext)
		if lwCtx != wrappedCtx {
			t.Errorf("%s: has the context methods: %v, its wrapper: %v", name, lwCtx, wrappedCtx)
		}
	}
	if watchlist.DoesClientNotSupportWatchListSemantics(ctxLW) {
		t.Error("a bare ListWatch declares that it cannot stream lists: the test proves nothing")
	}
}

type plainLW struct{}

func (plainLW) List(metav1.ListOptions) (runtime.Object, error)   { return &corev1.PodList{}, nil }
func (plainLW) Watch(metav1.ListOptions) (watch.Interface, error) { return watch.NewEmptyWatch(), nil }
