package informer

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// samePointers records, for each update, whether old and new are the
// very object the cache holds.
type samePointers struct {
	mu     sync.Mutex
	inf    *Informer[*corev1.ConfigMap]
	calls  int
	cached int
}

func (s *samePointers) OnAdd(*corev1.ConfigMap, bool)    {}
func (s *samePointers) OnDelete(*corev1.ConfigMap, bool) {}
func (s *samePointers) OnUpdate(old, new *corev1.ConfigMap) {
	got, _ := s.inf.Reader().Namespace(new.Namespace).Get(new.Name)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if old == new && new == got {
		s.cached++
	}
}

// A resync is a replay from the store to the due handler: the cached
// objects themselves, no store write (the store's RV and objects stay as
// they were), nothing through the FIFO; and the informer keeps no resync
// timer while no handler has a resync period.
func TestResyncIsAReplayFromTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[*corev1.ConfigMap]{})
		e.create(t, "a")
		e.create(t, "b")
		if _, err := e.inf.AddHandler(&cmEvents{}, HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
		e.run(t)
		e.waitRV(t)
		if _, ok := e.inf.nextResync(); ok {
			t.Fatal("a resync is scheduled with no handler asking for one")
		}
		before := e.inf.Reader().List()
		rv := e.inf.LastSyncResourceVersion()

		sp := &samePointers{inf: e.inf}
		if _, err := e.inf.AddHandler(sp, HandlerOptions{ResyncPeriod: 30 * time.Second}); err != nil {
			t.Fatal(err)
		}
		if next, ok := e.inf.nextResync(); !ok || time.Until(next) != 30*time.Second {
			t.Fatalf("next resync %v (%v), want in 30s", next, ok)
		}
		time.Sleep(31 * time.Second)
		synctest.Wait()
		sp.mu.Lock()
		calls, cached := sp.calls, sp.cached
		sp.mu.Unlock()
		if calls != 2 || cached != 2 {
			t.Fatalf("resync made %d updates, %d of them with the cached object as old and new; want 2 and 2", calls, cached)
		}
		after := e.inf.Reader().List()
		for i := range before {
			found := false
			for _, o := range after {
				found = found || o == before[i]
			}
			if !found {
				t.Fatalf("the resync rewrote %s in the store", before[i].Name)
			}
		}
		if got := e.inf.LastSyncResourceVersion(); got != rv {
			t.Fatalf("the resync moved the store's RV from %s to %s", rv, got)
		}
		if n := e.inf.fifo.Len(); n != 0 {
			t.Fatalf("the resync queued %d keys", n)
		}
	})
}
