package gvrfactory_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/clientgo/internal/gvrfactory"
	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	"github.com/listwatch/listwatch/fake"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type generic struct{ inf cache.SharedIndexInformer }

func (g generic) Informer() cache.SharedIndexInformer { return g.inf }
func (g generic) Lister() cache.GenericLister         { return nil }

// newFactory builds a Factory over srv; tweak, when set, goes on every
// source.
func newFactory(srv *fake.Server, tweak func(*metav1.ListOptions)) (*gvrfactory.Factory, *[]schema.GroupVersionResource) {
	var built []schema.GroupVersionResource
	f := gvrfactory.New(func(gvr schema.GroupVersionResource) informers.GenericInformer {
		built = append(built, gvr)
		lw := gvrfactory.Source(srv.ListerWatcher(fake.LWOptions{Resource: gvr}), tweak, nil)
		return generic{lwcache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})}
	})
	return f, &built
}

// Informers are built once per resource, started once, awaited together;
// one that cannot sync is reported false once the stop channel closes.
func TestFactory(t *testing.T) {
	srv := fake.NewTestServer(t, fake.Options{})
	for _, name := range []string{"web", "db"} {
		if _, err := srv.Create(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: name, Labels: map[string]string{"app": name}}}); err != nil {
			t.Fatal(err)
		}
	}
	f, built := newFactory(srv, func(o *metav1.ListOptions) { o.LabelSelector = "app=web" })
	pods := fake.Pods().GVR
	missing := schema.GroupVersionResource{Version: "v1", Resource: "widgets"} // 404 for ever
	if f.ForResource(pods) != f.ForResource(pods) {
		t.Fatal("ForResource built two informers for one resource")
	}
	f.ForResource(missing)
	if !slices.Equal(*built, []schema.GroupVersionResource{pods, missing}) {
		t.Fatalf("built %v", *built)
	}
	stop := make(chan struct{})
	f.Start(stop)
	f.Start(stop) // starts nothing more
	if !cache.WaitFor(t.Context(), "pods", f.ForResource(pods).Informer().HasSyncedChecker()) {
		t.Fatal("pods never synced")
	}
	if got := f.ForResource(pods).Informer().GetStore().ListKeys(); !slices.Equal(got, []string{"a/web"}) {
		t.Fatalf("cached %v; want [a/web] (the tweak's selector)", got)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	go func() {
		<-ctx.Done()
		close(stop)
	}()
	got := f.WaitForCacheSync(ctx.Done())
	if want := map[schema.GroupVersionResource]bool{pods: true, missing: false}; !maps.Equal(got, want) {
		t.Fatalf("WaitForCacheSync = %v; want %v", got, want)
	}
	f.Shutdown()
	f.Start(make(chan struct{}))
	f.ForResource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	f.Shutdown() // nothing was started after the first
}
