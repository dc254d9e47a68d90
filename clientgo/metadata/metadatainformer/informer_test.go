package metadatainformer_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metadatafake "k8s.io/client-go/metadata/fake"
	upstream "k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/clientgo/metadata/metadatainformer"
	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func meta(ns, name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
	}
}

func newClient(t *testing.T) *metadatafake.FakeMetadataClient {
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return metadatafake.NewSimpleMetadataClient(scheme, meta("a", "p1"), meta("b", "p2"))
}

var pods = corev1.SchemeGroupVersion.WithResource("pods")

func run(t *testing.T, f metadatainformer.SharedInformerFactory) cache.SharedIndexInformer {
	t.Helper()
	inf := f.ForResource(pods).Informer()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(func() {
		cancel()
		f.Shutdown()
	})
	f.Start(ctx.Done())
	if got := f.WaitForCacheSync(ctx.Done()); !got[pods] {
		t.Fatalf("WaitForCacheSync = %v", got)
	}
	return inf
}

// WithTransform applies to the factory's informers, which are listwatch's.
func TestWithTransform(t *testing.T) {
	f := metadatainformer.NewSharedInformerFactoryWithOptions(newClient(t), 0, metadatainformer.WithTransform(func(obj any) (any, error) {
		m := obj.(*metav1.PartialObjectMetadata)
		m.Labels = map[string]string{"seen": "yes"}
		return m, nil
	}))
	inf := run(t, f)
	dropIn := reflect.TypeOf(lwcache.NewSharedIndexInformer(&cache.ListWatch{}, &metav1.PartialObjectMetadata{}, 0, nil))
	if reflect.TypeOf(inf) != dropIn {
		t.Fatalf("the informer is a %T, not listwatch's", inf)
	}
	obj, ok, err := inf.GetStore().GetByKey("b/p2")
	if err != nil || !ok || obj.(*metav1.PartialObjectMetadata).Labels["seen"] != "yes" {
		t.Fatalf("cached b/p2 = %v, %v, %v; want it transformed", obj, ok, err)
	}
	if n := len(inf.GetStore().List()); n != 2 {
		t.Fatalf("cached %d objects; want 2", n)
	}
}

// A namespace-filtered factory; and client-go's own option, which cannot be
// read, gets client-go's factory.
func TestFilteredAndClientGoOption(t *testing.T) {
	inf := run(t, metadatainformer.NewFilteredSharedInformerFactory(newClient(t), 0, "a", nil))
	if keys := inf.GetStore().ListKeys(); len(keys) != 1 || keys[0] != "a/p1" {
		t.Fatalf("cached %v; want [a/p1]", keys)
	}
	var transformed bool
	f := metadatainformer.NewSharedInformerFactoryWithOptions(newClient(t), 0, upstream.WithTransform(func(obj any) (any, error) {
		transformed = true
		return obj, nil
	}))
	inf = run(t, f)
	dropIn := reflect.TypeOf(lwcache.NewSharedIndexInformer(&cache.ListWatch{}, &metav1.PartialObjectMetadata{}, 0, nil))
	if reflect.TypeOf(inf) == dropIn || !transformed {
		t.Fatalf("with client-go's option: a %T, transform called %v; want client-go's informer with the transform", inf, transformed)
	}
}
