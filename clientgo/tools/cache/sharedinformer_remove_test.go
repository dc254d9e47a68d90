package cache

import (
	"slices"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer/informertest"
	"github.com/listwatch/listwatch/internal/testing/objects"
)

// newCompat is a drop-in informer on srv's configmaps.
func newCompat(srv *fake.Server) cache.SharedIndexInformer {
	return NewSharedIndexInformer(srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &corev1.ConfigMap{}, 0, nil)
}

// Removing a handle on an informer that did not return it changes nothing
// and, as in client-go, is not an error: the handle keeps its notifications
// on its own informer (it used to be removed from there). A handle of
// client-go's own informer is ignored too.
func TestCompatRemoveForeignHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		srv.Create(t.Context(), objects.ConfigMap("ns", "a", objects.Data("v", "0")))
		owner, other := newCompat(srv), newCompat(srv)
		h1, h2 := &informertest.ClientGoRecorder{}, &informertest.ClientGoRecorder{}
		reg1, err := owner.AddEventHandler(h1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := owner.AddEventHandler(h2); err != nil {
			t.Fatal(err)
		}
		if err := other.RemoveEventHandler(reg1); err != nil {
			t.Fatalf("removing another informer's handle: %v (client-go returns nil)", err)
		}
		cg := cache.NewSharedIndexInformer(srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &corev1.ConfigMap{}, 0, nil)
		cgReg, err := cg.AddEventHandler(&informertest.ClientGoRecorder{})
		if err != nil {
			t.Fatal(err)
		}
		if err := owner.RemoveEventHandler(cgReg); err != nil {
			t.Fatalf("removing a client-go informer's handle: %v", err)
		}
		runSII(t, owner)
		want := []string{"add a@1 initial=true"}
		for i, h := range []*informertest.ClientGoRecorder{h1, h2} {
			if got := h.Take(); !slices.Equal(got, want) {
				t.Fatalf("handler %d got %q, want %q", i+1, got, want)
			}
		}
		if !reg1.HasSynced() {
			t.Fatal("handler 1 not synced")
		}
	})
}
