package store_test

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/store"
)

var errBoom = errors.New("boom")

// nodeIndex files pods by node; a pod on node "bad" makes it fail.
func nodeIndex(p *corev1.Pod) ([]string, error) {
	if p.Spec.NodeName == "bad" {
		return nil, errBoom
	}
	return []string{p.Spec.NodeName}, nil
}

func newPodStore(t *testing.T) *store.Store[*corev1.Pod] {
	t.Helper()
	s, err := store.New(store.Options[*corev1.Pod]{Indexers: store.Indexers[*corev1.Pod]{"node": nodeIndex}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func withRV(p *corev1.Pod, rv string) *corev1.Pod { p.ResourceVersion = rv; return p }

func TestNewRejectsBadIndexers(t *testing.T) {
	ok := func(*corev1.Pod) ([]string, error) { return nil, nil }
	for _, tc := range []struct {
		name     string
		indexers store.Indexers[*corev1.Pod]
		want     error
	}{
		{"empty name", store.Indexers[*corev1.Pod]{"": ok}, store.ErrInvalidIndexer},
		{"nil function", store.Indexers[*corev1.Pod]{"x": nil}, store.ErrInvalidIndexer},
		{"reserved namespace index", store.Indexers[*corev1.Pod]{store.NamespaceIndex: ok}, store.ErrIndexConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := store.New(store.Options[*corev1.Pod]{Indexers: tc.indexers}); !errors.Is(err, tc.want) {
				t.Fatalf("New: %v, want %v", err, tc.want)
			}
		})
	}
}

func TestUpsert(t *testing.T) {
	var nilPod *corev1.Pod
	for _, tc := range []struct {
		name     string
		obj      *corev1.Pod
		wantErr  error
		wantKeys []string
		wantNode []string // keys on node "n2"
		wantRV   string
	}{
		{"new object", withRV(pod("ns", "c", "n2", nil), "7"), nil, []string{"ns/a", "ns/b", "ns/c"}, []string{"ns/c"}, "7"},
		{"update moves index value", withRV(pod("ns", "a", "n2", nil), "8"), nil, []string{"ns/a", "ns/b"}, []string{"ns/a"}, "8"},
		{"cluster-scoped", withRV(pod("", "c", "n1", nil), "9"), nil, []string{"c", "ns/a", "ns/b"}, nil, "9"},
		{"nil object", nilPod, store.ErrNilObject, []string{"ns/a", "ns/b"}, nil, "2"},
		{"no name", pod("ns", "", "n1", nil), store.ErrNoName, []string{"ns/a", "ns/b"}, nil, "2"},
		{"index error leaves store unchanged", pod("ns", "a", "bad", nil), store.ErrIndexFunc, []string{"ns/a", "ns/b"}, nil, "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newPodStore(t)
			a := withRV(pod("ns", "a", "n1", nil), "1")
			for _, p := range []*corev1.Pod{a, withRV(pod("ns", "b", "n1", nil), "2")} {
				if err := s.Add(p); err != nil {
					t.Fatal(err)
				}
			}
			err := s.Upsert(tc.obj)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Upsert: %v, want %v", err, tc.wantErr)
			}
			r := s.Reader()
			keys := r.ListKeys()
			slices.Sort(keys)
			onN2, _ := r.IndexKeys("node", "n2")
			if !slices.Equal(keys, tc.wantKeys) || len(onN2) != len(tc.wantNode) || r.LastSyncResourceVersion() != tc.wantRV {
				t.Fatalf("keys %v, on n2 %v, rv %q; want %v, %v, %q", keys, onN2, r.LastSyncResourceVersion(), tc.wantKeys, tc.wantNode, tc.wantRV)
			}
			if tc.wantErr != nil {
				if got, _ := r.GetByKey("ns/a"); got != a {
					t.Fatalf("failed write replaced the stored object")
				}
			}
		})
	}
}

func TestValueIndexers(t *testing.T) {
	node := func(p *corev1.Pod) (string, bool) { return p.Spec.NodeName, p.Spec.NodeName != "" }
	s, err := store.New(store.Options[*corev1.Pod]{ValueIndexers: store.ValueIndexers[*corev1.Pod]{"node": node}})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Add(pod("ns", "a", "n1", nil))
	_ = s.Add(pod("ns", "b", "", nil))
	if vals, _ := s.Reader().ListIndexValues("node"); !slices.Equal(vals, []string{"n1"}) {
		t.Fatalf("values %v: an ok=false object must stay out of the index", vals)
	}
	for _, tc := range []struct {
		name string
		add  store.ValueIndexers[*corev1.Pod]
		want error
	}{
		{"taken name", store.ValueIndexers[*corev1.Pod]{"node": node}, store.ErrIndexConflict},
		{"nil function", store.ValueIndexers[*corev1.Pod]{"x": nil}, store.ErrInvalidIndexer},
		{"empty name", store.ValueIndexers[*corev1.Pod]{"": node}, store.ErrInvalidIndexer},
	} {
		if err := s.AddValueIndexers(tc.add); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	both := store.Options[*corev1.Pod]{Indexers: store.Indexers[*corev1.Pod]{"node": nodeIndex}, ValueIndexers: store.ValueIndexers[*corev1.Pod]{"node": node}}
	if _, err := store.New(both); !errors.Is(err, store.ErrIndexConflict) {
		t.Fatalf("same name in both maps: %v", err)
	}
}

func TestSwapKeyed(t *testing.T) {
	s := newPodStore(t)
	first := pod("ns", "a", "n1", nil)
	if _, _, err := s.SwapKeyed("ns/a", first); err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := s.Reader().Get(pod("ns", "a", "", nil)); !ok || got != first {
		t.Fatal("object stored with SwapKeyed not found by Get")
	}
	var nilPod *corev1.Pod
	if _, _, err := s.SwapKeyed("ns/x", nilPod); !errors.Is(err, store.ErrNilObject) {
		t.Fatalf("nil: %v", err)
	}
	if _, _, err := s.SwapKeyed("", first); !errors.Is(err, store.ErrNoName) {
		t.Fatalf("empty key: %v", err)
	}
}

func TestSwapReturnsReplacedObject(t *testing.T) {
	s := newPodStore(t)
	first, second := pod("ns", "a", "n1", nil), pod("ns", "a", "n2", nil)
	if old, replaced, err := s.Swap(first); err != nil || replaced || old != nil {
		t.Fatalf("first Swap = %v, %t, %v", old, replaced, err)
	}
	if old, replaced, err := s.Swap(second); err != nil || !replaced || old != first {
		t.Fatalf("second Swap = %v, %t, %v", old, replaced, err)
	}
}

func TestDelete(t *testing.T) {
	var nilPod *corev1.Pod
	for _, tc := range []struct {
		name     string
		del      func(s *store.Store[*corev1.Pod]) error
		wantKeys []string
		wantRV   string
		wantErr  error
	}{
		{"by object", func(s *store.Store[*corev1.Pod]) error { return s.Delete(withRV(pod("ns", "a", "", nil), "5")) }, []string{"ns/b"}, "5", nil},
		{"absent object still records rv", func(s *store.Store[*corev1.Pod]) error { return s.Delete(withRV(pod("ns", "z", "", nil), "6")) }, []string{"ns/a", "ns/b"}, "6", nil},
		{"nil object", func(s *store.Store[*corev1.Pod]) error { return s.Delete(nilPod) }, []string{"ns/a", "ns/b"}, "2", store.ErrNilObject},
		{"by key", func(s *store.Store[*corev1.Pod]) error {
			if old, ok := s.DeleteByKey("ns/b"); !ok || old.Name != "b" {
				return errBoom
			}
			if _, ok := s.DeleteByKey("ns/b"); ok {
				return errBoom
			}
			return nil
		}, []string{"ns/a"}, "2", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newPodStore(t)
			_ = s.Add(withRV(pod("ns", "a", "n1", nil), "1"))
			_ = s.Add(withRV(pod("ns", "b", "n1", nil), "2"))
			if err := tc.del(s); !errors.Is(err, tc.wantErr) {
				t.Fatalf("delete: %v, want %v", err, tc.wantErr)
			}
			keys := s.ListKeys()
			slices.Sort(keys)
			onN1, _ := s.Reader().IndexKeys("node", "n1")
			if !slices.Equal(keys, tc.wantKeys) || !slices.Equal(onN1, tc.wantKeys) || s.Reader().LastSyncResourceVersion() != tc.wantRV {
				t.Fatalf("keys %v, on n1 %v, rv %q; want %v, %q", keys, onN1, s.Reader().LastSyncResourceVersion(), tc.wantKeys, tc.wantRV)
			}
		})
	}
}

func TestAddIndexersAfterPopulation(t *testing.T) {
	s := newPodStore(t)
	_ = s.Add(pod("ns", "a", "n1", map[string]string{"app": "web"}))
	_ = s.Add(pod("ns", "b", "n1", map[string]string{"app": "db"}))
	app := func(p *corev1.Pod) ([]string, error) { return []string{p.Labels["app"]}, nil }
	if err := s.AddIndexers(store.Indexers[*corev1.Pod]{"app": app}); err != nil {
		t.Fatal(err)
	}
	if keys, _ := s.Reader().IndexKeys("app", "web"); !slices.Equal(keys, []string{"ns/a"}) {
		t.Fatalf("app=web: %v", keys)
	}
	if err := s.AddIndexers(store.Indexers[*corev1.Pod]{"app": app}); !errors.Is(err, store.ErrIndexConflict) {
		t.Fatalf("conflict: %v", err)
	}
	failing := func(p *corev1.Pod) ([]string, error) {
		if p.Name == "b" {
			return nil, errBoom
		}
		return nil, nil
	}
	if err := s.AddIndexers(store.Indexers[*corev1.Pod]{"failing": failing}); !errors.Is(err, errBoom) {
		t.Fatalf("failing indexer: %v", err)
	}
	if got := s.Reader().IndexNames(); !slices.Equal(got, []string{store.NamespaceIndex, "node", "app"}) {
		t.Fatalf("IndexNames %v", got)
	}
}
