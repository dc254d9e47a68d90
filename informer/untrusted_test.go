package informer

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/reflector"
)

// scriptedSource answers lists from a script (one list per call, in order)
// and opens fake watches that the test drives. It records the resource
// version every list asked for.
type scriptedSource struct {
	mu      sync.Mutex
	lists   []*corev1.ConfigMapList
	asked   []string
	watches []*watch.FakeWatcher
}

func (s *scriptedSource) ListWithContext(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, o.ResourceVersion)
	l := s.lists[0]
	s.lists = s.lists[1:]
	return l, nil
}

func (s *scriptedSource) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := watch.NewFakeWithChanSize(16, false)
	s.watches = append(s.watches, w)
	return w, nil
}

// watch returns the i-th watch opened.
func (s *scriptedSource) watch(t *testing.T, i int) *watch.FakeWatcher {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.watches) <= i {
		t.Fatalf("%d watches opened, want at least %d", len(s.watches), i+1)
	}
	return s.watches[i]
}

func cmAt(name, rv, v string) *corev1.ConfigMap {
	return objects.ConfigMap("ns", name, objects.RV(rv), objects.Data("v", v))
}

func cmList(rv string, items ...*corev1.ConfigMap) *corev1.ConfigMapList {
	l := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for _, c := range items {
		l.Items = append(l.Items, *c)
	}
	return l
}

// A resource version that goes backwards within a watch (a bogus one from
// the far future, then a real one) makes the informer relist from a quorum
// read: the store's resource version, which barriers wait for, is then the
// list's, and the object the bogus event brought is the server's again.
// While the watch stays quiet after the bogus event nothing can tell it
// from a real one: a barrier below it returns (docs/operations.md says so).
func TestResourceVersionGoingBackRelists(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &scriptedSource{lists: []*corev1.ConfigMapList{
			cmList("10", cmAt("a", "10", "listed")),
			cmList("13", cmAt("a", "13", "relisted")),
		}}
		inf, err := New(Options[*corev1.ConfigMap]{Source: src,
			Reflector: reflector.Config[*corev1.ConfigMap]{WatchList: reflector.WatchListOff}})
		if err != nil {
			t.Fatal(err)
		}
		runInformer(t, inf)
		if err := inf.WaitForSync(t.Context()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		done, cancel := context.WithCancel(t.Context())
		cancel()
		reached := func(rv string) bool { return inf.WaitForResourceVersion(done, rv) == nil }

		w := src.watch(t, 0)
		w.Modify(cmAt("a", "11", "real"))
		w.Modify(cmAt("a", "99999999", "bogus"))
		synctest.Wait()
		if !reached("500") {
			t.Errorf("a quiet watch after a bogus event: a barrier at 500 waits; nothing could have told the event was bogus")
		}
		w.Modify(cmAt("a", "12", "real again"))
		synctest.Wait()
		if reached("500") {
			t.Errorf("after a resource version went back, a barrier at 500 returns")
		}
		time.Sleep(2 * time.Second) // the backoff before the relist
		synctest.Wait()

		if got := src.asked; len(got) != 2 || got[1] != "" {
			t.Fatalf("lists asked for %q, want a first list and a relist from a quorum read (\"\")", got)
		}
		if got := inf.LastSyncResourceVersion(); got != "13" {
			t.Errorf("store resource version %q after the relist, want the list's 13", got)
		}
		if reached("500") || !reached("13") {
			t.Errorf("barriers after the relist: 500 returns %t (want false), 13 returns %t (want true)", reached("500"), reached("13"))
		}
		if a, ok := inf.Reader().GetByKey("ns/a"); !ok || a.Data["v"] != "relisted" || a.ResourceVersion != "13" {
			t.Errorf("a = %+v (%t), want the relisted object", a, ok)
		}
		if got := inf.Status().Reason; got != reflector.ReasonNone {
			t.Errorf("status reason %v after the relist, want none", got)
		}
	})
}

// A list without a resource version is confirmed by a second list once the
// watch after it is open: an object deleted between the first list and the
// watch leaves the cache then, although the watch (from "") never tells of
// it and stays quiet.
func TestListWithoutResourceVersionConverges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &scriptedSource{lists: []*corev1.ConfigMapList{
			cmList("", cmAt("a", "5", "listed"), cmAt("b", "6", "deleted before the watch")),
			cmList("", cmAt("a", "5", "listed")),
		}}
		inf, err := New(Options[*corev1.ConfigMap]{Source: src,
			Reflector: reflector.Config[*corev1.ConfigMap]{WatchList: reflector.WatchListOff}})
		if err != nil {
			t.Fatal(err)
		}
		var rec cmEvents
		inOrder := InOrder
		if _, err := inf.AddHandler(&rec, HandlerOptions{Delivery: &inOrder}); err != nil {
			t.Fatal(err)
		}
		runInformer(t, inf)
		if err := inf.WaitForSync(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if _, ok := inf.Reader().GetByKey("ns/b"); ok {
			t.Errorf("b, deleted before the watch opened, is still cached a second later (lists asked for %q)", src.asked)
		}
		rec.ExpectExactly(t, "add a@5 initial=true", "add b@6 initial=true", "delete b@6 unknown=true")
	})
}
