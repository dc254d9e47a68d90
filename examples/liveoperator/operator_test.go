package liveoperator_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/examples/liveoperator"
	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
)

// seen records the operator's reconciles and namespace changes, and
// signals each.
type seen struct {
	mu         sync.Mutex
	reconciled map[string]bool // key → exists at the last reconcile
	changes    []string
	poke       chan struct{}
}

func (s *seen) signal() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// until waits until ok holds (checked at once and after each signal).
func (s *seen) until(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for {
		s.mu.Lock()
		done := ok()
		s.mu.Unlock()
		if done {
			return
		}
		select {
		case <-s.poke:
		case <-t.Context().Done():
			t.Fatalf("waiting for %s", what)
		}
	}
}

// TestNamespacesFromAConfigMap: the operator reconciles the Pods of the
// namespaces its ConfigMap lists; editing the ConfigMap adds a namespace
// (listed alone, its Pods reconciled) and removes one (no list, its Pods
// reconciled as gone), with the same manager throughout; a Pod of a
// namespace never listed is never reconciled.
func TestNamespacesFromAConfigMap(t *testing.T) {
	srv := fake.NewTestServer(t, fake.Options{})
	ctx := t.Context()
	for _, ns := range []string{"a", "b", "c"} {
		for i := range 3 {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p%d", i)},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
			if _, err := srv.Create(ctx, pod); err != nil {
				t.Fatal(err)
			}
		}
	}
	created, err := srv.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "operator", Name: "config"},
		Data: map[string]string{liveoperator.NamespacesKey: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	config := created.(*corev1.ConfigMap)
	s := &seen{reconciled: map[string]bool{}, poke: make(chan struct{}, 1)}
	op, err := liveoperator.New(klog.NewContext(ctx, klog.Background().V(1)), liveoperator.Options{
		Config: fakeapi.ServeTest(t, srv, fakeapi.Options{}), ConfigNamespace: "operator", ConfigName: "config",
		Reconciled: func(key string, exists bool) {
			s.mu.Lock()
			s.reconciled[key] = exists
			s.mu.Unlock()
			s.signal()
		},
		Changed: func(nss []string, err error) {
			s.mu.Lock()
			s.changes = append(s.changes, fmt.Sprintf("%v %v", nss, err))
			s.mu.Unlock()
			s.signal()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- op.Run(rctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	pods := func(ns string) []string { return []string{ns + "/p0", ns + "/p1", ns + "/p2"} }
	in := func(exists bool, keys ...string) func() bool {
		return func() bool {
			for _, k := range keys {
				if e, ok := s.reconciled[k]; !ok || e != exists {
					return false
				}
			}
			return true
		}
	}
	s.until(t, "a's pods", in(true, pods("a")...))
	listsOfPods := func() []string {
		var out []string
		for _, c := range srv.Calls() {
			if c.Verb == fake.VerbList && c.Resource.Resource == "pods" {
				out = append(out, "ns="+c.Namespace)
			}
		}
		srv.ResetCalls()
		return out
	}
	listsOfPods()

	// a and b.
	config.Data[liveoperator.NamespacesKey] = "a,b"
	updated, err := srv.Update(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	config = updated.(*corev1.ConfigMap)
	s.until(t, "b's pods", in(true, pods("b")...))
	s.until(t, "the change", func() bool { return len(s.changes) == 2 })
	if got := listsOfPods(); !slices.Equal(got, []string{"ns=b"}) {
		t.Fatalf("adding b: pod lists %v, want one of b", got)
	}

	// b only: a's pods leave the cache, reconciled as gone.
	config.Data[liveoperator.NamespacesKey] = "b"
	if _, err := srv.Update(ctx, config); err != nil {
		t.Fatal(err)
	}
	s.until(t, "a's pods gone", in(false, pods("a")...))
	s.until(t, "the change", func() bool { return len(s.changes) == 3 })
	if got := listsOfPods(); len(got) != 0 {
		t.Fatalf("removing a: pod lists %v, want none", got)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.reconciled {
		if k[:2] == "c/" {
			t.Errorf("%s reconciled: c was never configured", k)
		}
	}
	if want := []string{"[a] <nil>", "[a b] <nil>", "[b] <nil>"}; !slices.Equal(s.changes, want) {
		t.Errorf("changes %v, want %v", s.changes, want)
	}
}
