package dynamicinformer_test

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/clientgo/dynamic/dynamicinformer"
	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func pod(ns, name, app string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(map[string]string{"app": app})
	return u
}

// The factory's informers are listwatch's, shared by resource, limited to
// the namespace and the tweak's selector, and their listers see the cache.
func TestFilteredFactory(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	client := dynamicfake.NewSimpleDynamicClient(scheme, pod("a", "web", "web"), pod("a", "db", "db"), pod("b", "web", "web"))
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, "a",
		func(o *metav1.ListOptions) { o.LabelSelector = "app=web" })
	gvr := corev1.SchemeGroupVersion.WithResource("pods")
	g := f.ForResource(gvr)
	if f.ForResource(gvr) != g {
		t.Fatal("ForResource built two informers for one resource")
	}
	dropIn := reflect.TypeOf(lwcache.NewSharedIndexInformer(&cache.ListWatch{}, &unstructured.Unstructured{}, 0, nil))
	if reflect.TypeOf(g.Informer()) != dropIn {
		t.Fatalf("the informer is a %T, not listwatch's", g.Informer())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer func() {
		cancel()
		f.Shutdown()
	}()
	f.Start(ctx.Done())
	if got := f.WaitForCacheSync(ctx.Done()); !got[gvr] || len(got) != 1 {
		t.Fatalf("WaitForCacheSync = %v", got)
	}
	objs, err := g.Lister().List(labels.Everything())
	if err != nil || len(objs) != 1 {
		t.Fatalf("lister = %v, %v; want a/web", objs, err)
	}
	if _, err := g.Lister().ByNamespace("a").Get("web"); err != nil {
		t.Fatalf("ByNamespace(a).Get(web): %v", err)
	}
	if keys := g.Informer().GetIndexer().ListKeys(); !slices.Equal(keys, []string{"a/web"}) {
		t.Fatalf("cached %v", keys)
	}
}
