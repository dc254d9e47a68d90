package reflector

import (
	"context"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/internal/testing/objects"
)

// TestFromClient syncs a typed clientset's pods through FromClient.
func TestFromClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset(objects.Pod("ns", "a"))
		st := newMemStore[*corev1.Pod]()
		r, err := New(Options[*corev1.Pod]{
			Source: FromClient[*corev1.PodList](cs.CoreV1().Pods("ns")),
			Store:  st,
			Config: Config[*corev1.Pod]{WatchList: WatchListOff},
		})
		if err != nil {
			t.Fatal(err)
		}
		stop := runReflector(t, r)
		if _, err := cs.CoreV1().Pods("ns").Create(t.Context(), objects.Pod("ns", "b"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		stop()
		if got := len(st.versions()); got != 2 || !r.HasSynced() {
			t.Errorf("store has %d pods (synced %t), want 2: %v", got, r.HasSynced(), st.calls())
		}
	})
}

// TestFromClientErrorIsUntyped: a failed typed List returns a nil interface,
// not a typed nil list.
func TestFromClientErrorIsUntyped(t *testing.T) {
	src := FromClient[*corev1.PodList](failingClient{})
	obj, err := src.ListWithContext(t.Context(), metav1.ListOptions{})
	if err == nil || obj != nil {
		t.Errorf("got (%v, %v), want (nil, error)", obj, err)
	}
}

type failingClient struct{}

func (failingClient) List(context.Context, metav1.ListOptions) (*corev1.PodList, error) {
	return nil, errorFor("403", 0)
}

func (failingClient) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, errorFor("403", 0)
}

// plainLW gives a scriptedLW the context-free methods of a client-go
// cache.ListerWatcher; client-go calls the WithContext ones.
type plainLW struct{ *scriptedLW }

func (plainLW) List(metav1.ListOptions) (runtime.Object, error)   { panic("unused") }
func (plainLW) Watch(metav1.ListOptions) (watch.Interface, error) { panic("unused") }

// TestFromListerWatcherKeepsNoStreaming: WatchListAuto becomes a paginated
// list for a source that declares it cannot stream.
func TestFromListerWatcherKeepsNoStreaming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := newScriptedLW(t)
		lw.list(podList("3", "", "a"), nil)
		lw.watch(newFakeWatch(), nil)
		var src cache.ListerWatcher = objects.NoWatchList(plainLW{lw})
		r, err := New(Options[*corev1.Pod]{Source: FromListerWatcher(src), Store: newMemStore[*corev1.Pod]()})
		if err != nil {
			t.Fatal(err)
		}
		stop := runReflector(t, r)
		stop()
		checkCalls(t, lw, []string{`list rv="0" limit=500`, `watch rv="3" bookmarks`})
	})
}
