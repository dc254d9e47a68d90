package crcache_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/listwatch/listwatch/crcache"
	"github.com/listwatch/listwatch/fake"
)

// heardCalls records a controller-runtime handler's calls as "add ns/name"
// and "delete ns/name" ("tombstone ns/name" for a
// DeletedFinalStateUnknown), and signals each.
type heardCalls struct {
	mu    sync.Mutex
	calls []string
	poke  chan struct{}
}

func (h *heardCalls) note(s string) {
	h.mu.Lock()
	h.calls = append(h.calls, s)
	h.mu.Unlock()
	select {
	case h.poke <- struct{}{}:
	default:
	}
}

// await returns the n calls recorded since the last await, sorted, once
// there are n.
func (h *heardCalls) await(t *testing.T, n int) []string {
	t.Helper()
	for {
		h.mu.Lock()
		if len(h.calls) >= n {
			out := h.calls
			h.calls = nil
			h.mu.Unlock()
			slices.Sort(out)
			return out
		}
		h.mu.Unlock()
		select {
		case <-h.poke:
		case <-t.Context().Done():
			t.Fatalf("waiting for %d handler calls", n)
		}
	}
}

// TestSetNamespaces: a cache built with Options.Live changes the
// namespaces of its ConfigMap informer while it runs: gaining b lists b
// alone, losing a lists nothing, the handler hears exactly the objects
// gained and lost (deletes, not tombstones), and reads follow; a bad name
// is refused and changes nothing.
func TestSetNamespaces(t *testing.T) {
	srv := fake.NewTestServer(t, fake.Options{})
	var keysA, keysB []string
	for _, ns := range []string{"a", "b", "c"} {
		for i := range 5 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm%d", i)}}
			if _, err := srv.Create(t.Context(), cm); err != nil {
				t.Fatal(err)
			}
			switch ns {
			case "a":
				keysA = append(keysA, ns+"/"+cm.Name)
			case "b":
				keysB = append(keysB, ns+"/"+cm.Name)
			}
		}
	}
	c := start(t, srv, crcache.NewWithOptions(crcache.Options{Live: &crcache.LiveOptions{Namespaces: []string{"a"}}}), cache.Options{})
	inf, err := c.GetInformer(t.Context(), &corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	h := &heardCalls{poke: make(chan struct{}, 1)}
	keyOf := func(obj any) string { cm := obj.(*corev1.ConfigMap); return cm.Namespace + "/" + cm.Name }
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { h.note("add " + keyOf(obj)) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				h.note("tombstone " + keyOf(d.Obj))
				return
			}
			h.note("delete " + keyOf(obj))
		},
	}); err != nil {
		t.Fatal(err)
	}
	with := func(verb string, keys []string) []string {
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = verb + " " + k
		}
		slices.Sort(out)
		return out
	}
	if got, want := h.await(t, 5), with("add", keysA); !slices.Equal(got, want) {
		t.Fatalf("first: calls %v, want %v", got, want)
	}
	cached := func() []string {
		var list corev1.ConfigMapList
		if err := c.List(t.Context(), &list); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, cm := range list.Items {
			out = append(out, cm.Namespace+"/"+cm.Name)
		}
		slices.Sort(out)
		return out
	}
	listsOf := func() []string {
		var out []string
		for _, call := range srv.Calls() {
			if call.Verb == fake.VerbList {
				out = append(out, "ns="+call.Namespace)
			}
		}
		srv.ResetCalls()
		return out
	}
	listsOf()

	if err := crcache.SetNamespaces(t.Context(), c, "a", "b"); err != nil {
		t.Fatal(err)
	}
	if got := listsOf(); !slices.Equal(got, []string{"ns=b"}) {
		t.Fatalf("adding b: lists %v, want one of b", got)
	}
	if got, want := h.await(t, 5), with("add", keysB); !slices.Equal(got, want) {
		t.Fatalf("adding b: calls %v, want %v", got, want)
	}
	if got, want := cached(), append(slices.Clone(keysA), keysB...); !slices.Equal(got, want) {
		t.Fatalf("adding b: cache %v, want %v", got, want)
	}

	if err := crcache.SetNamespaces(t.Context(), c, "b"); err != nil {
		t.Fatal(err)
	}
	if got := listsOf(); len(got) != 0 {
		t.Fatalf("removing a: lists %v, want none", got)
	}
	if got, want := h.await(t, 5), with("delete", keysA); !slices.Equal(got, want) {
		t.Fatalf("removing a: calls %v, want %v", got, want)
	}
	if got := cached(); !slices.Equal(got, keysB) {
		t.Fatalf("removing a: cache %v, want %v", got, keysB)
	}
	var inB corev1.ConfigMapList
	if err := c.List(t.Context(), &inB, client.InNamespace("b")); err != nil || len(inB.Items) != 5 {
		t.Fatalf("List in b: %d items, %v", len(inB.Items), err)
	}

	if err := crcache.SetNamespaces(t.Context(), c, "b", "Not_A_Namespace"); err == nil || !strings.Contains(err.Error(), `"Not_A_Namespace"`) {
		t.Fatalf("SetNamespaces with a bad name = %v, want an error naming it", err)
	}
	if got := cached(); !slices.Equal(got, keysB) {
		t.Fatalf("after a refused change: cache %v, want %v", got, keysB)
	}
	plain := start(t, srv, crcache.New, cache.Options{})
	if err := crcache.SetNamespaces(t.Context(), plain, "b"); err == nil {
		t.Fatal("SetNamespaces on a cache without Options.Live succeeded")
	}
}
