package gvrfactory_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	upstreamdynamic "k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	upstreammetadata "k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/clientgo/dynamic/dynamicinformer"
	"github.com/listwatch/listwatch/clientgo/metadata/metadatainformer"
	"github.com/listwatch/listwatch/internal/testing/testapiserver"
	"github.com/listwatch/listwatch/restsource"
)

// trim is kube-controller-manager's transform of both its factories.
func trim(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil && a.GetManagedFields() != nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

// informerFactory is a metadata or dynamic factory's ForResource.
type informerFactory func(schema.GroupVersionResource) cache.SharedIndexInformer

func metadataFactory(f upstreammetadata.SharedInformerFactory) informerFactory {
	return func(gvr schema.GroupVersionResource) cache.SharedIndexInformer { return f.ForResource(gvr).Informer() }
}

func dynamicFactory(f upstreamdynamic.DynamicSharedInformerFactory) informerFactory {
	return func(gvr schema.GroupVersionResource) cache.SharedIndexInformer { return f.ForResource(gvr).Informer() }
}

// TestRealAPIServer: on a real kube-apiserver, the drop-in metadata and
// dynamic factories, given the clients metadata.NewForConfig and
// dynamic.NewForConfig return, decode with restsource (their Interner
// sees the objects) and cache what client-go's factories cache on the same
// server with kube-controller-manager's managedFields trim, through a
// list, then creates, updates and deletes, for a built-in and a custom
// resource; a client listwatch cannot reach (wrapped) still works,
// through the client.
func TestRealAPIServer(t *testing.T) {
	ctx := t.Context()
	srv, err := testapiserver.Start(ctx, t, testapiserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := srv.AdminConfig()
	cs := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	mc := metadata.NewForConfigOrDie(cfg)
	widgets, err := srv.InstallCRD(ctx, schema.GroupVersionKind{Group: "example.listwatch.io", Version: "v1", Kind: "Widget"})
	if err != nil {
		t.Fatal(err)
	}
	configmaps := corev1.SchemeGroupVersion.WithResource("configmaps")
	const ns = "gvr"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	write := func(i int) {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i), Namespace: ns,
			Labels: map[string]string{"app": "web", "tier": fmt.Sprint(i % 3)}, Annotations: map[string]string{"note": "x"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "owner", UID: "u-1"}}},
			Data: map[string]string{"k": fmt.Sprint(i)}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{FieldManager: "writer"}); err != nil {
			t.Fatal(err)
		}
		w := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.listwatch.io/v1", "kind": "Widget",
			"metadata": map[string]any{"name": fmt.Sprintf("w-%02d", i), "namespace": ns, "labels": map[string]any{"app": "web"}},
			"spec":     map[string]any{"size": int64(i), "color": "blue", "tags": []any{"a", "b"}},
		}}
		if _, err := dyn.Resource(widgets).Namespace(ns).Create(ctx, w, metav1.CreateOptions{FieldManager: "writer"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		write(i)
	}

	in, dynIn := restsource.NewInterner(0), restsource.NewInterner(0)
	memory := metadatainformer.MemoryOptions{StripManagedFields: true, Interner: in, ShareRepeated: true}
	dynMemory := dynamicinformer.MemoryOptions{StripManagedFields: true, Interner: dynIn, ShareRepeated: true}
	type pair struct {
		name                string
		listwatch, clientgo informerFactory
	}
	pairs := []pair{
		{"metadata", metadataFactory(metadatainformer.NewSharedInformerFactoryWithOptions(mc, 0, metadatainformer.WithTransform(trim), metadatainformer.WithMemoryOptions(memory))),
			metadataFactory(upstreammetadata.NewSharedInformerFactoryWithOptions(mc, 0, upstreammetadata.WithTransform(trim)))},
		{"dynamic", dynamicFactory(dynamicinformer.NewFilteredDynamicSharedInformerFactoryWithMemoryOptions(dyn, 0, "", nil, dynMemory)),
			dynamicFactory(upstreamdynamic.NewDynamicSharedInformerFactory(dyn, 0))},
		// Wrapped, the clients cannot be reached: client-go's decoding.
		{"metadata-wrapped", metadataFactory(metadatainformer.NewSharedInformerFactoryWithOptions(wrappedMetadata{mc}, 0, metadatainformer.WithTransform(trim))),
			metadataFactory(upstreammetadata.NewSharedInformerFactoryWithOptions(mc, 0, upstreammetadata.WithTransform(trim)))},
	}
	var informers []cache.SharedIndexInformer
	type compared struct {
		name   string
		gvr    schema.GroupVersionResource
		lw, cg cache.SharedIndexInformer
	}
	var all []compared
	for _, p := range pairs {
		for _, gvr := range []schema.GroupVersionResource{configmaps, widgets} {
			lw, cg := p.listwatch(gvr), p.clientgo(gvr)
			if p.name == "dynamic" {
				// client-go's dynamic factory has no transform option.
				for _, inf := range []cache.SharedIndexInformer{lw, cg} {
					if err := inf.SetTransform(trim); err != nil {
						t.Fatal(err)
					}
				}
			}
			all = append(all, compared{p.name, gvr, lw, cg})
			informers = append(informers, lw, cg)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, inf := range informers {
		go inf.RunWithContext(runCtx)
	}
	for _, inf := range informers {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			t.Fatal("not synced")
		}
	}
	check := func(phase string) {
		t.Helper()
		for _, c := range all {
			var diff string
			if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
				diff = differ(c.lw.GetStore(), c.cg.GetStore())
				return diff == "", nil
			}); err != nil {
				t.Errorf("%s: %s %s: listwatch's cache differs from client-go's: %s", phase, c.name, c.gvr.Resource, diff)
			}
		}
	}
	check("after the list")
	for name, in := range map[string]*restsource.Interner{"metadata": in, "dynamic": dynIn} {
		if st := in.Stats(); st.Hits+st.Misses == 0 {
			t.Errorf("the %s factory's Interner saw no string: it did not decode with restsource", name)
		}
	}
	for i := range 5 {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, fmt.Sprintf("cm-%02d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Labels["tier"] = "changed"
		if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{FieldManager: "other"}); err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, fmt.Sprintf("cm-%02d", 10+i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := dyn.Resource(widgets).Namespace(ns).Delete(ctx, fmt.Sprintf("w-%02d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 20; i < 25; i++ {
		write(i)
	}
	check("after the watch events")
	for _, c := range all {
		if objs, err := c.lw.GetIndexer().ByIndex(cache.NamespaceIndex, ns); len(objs) != 20 || err != nil {
			t.Errorf("%s %s: %d objects cached in %s, want 20 (%v)", c.name, c.gvr.Resource, len(objs), ns, err)
		}
	}
}

// differ says how two caches differ, or "" if they hold equal objects.
func differ(a, b cache.Store) string {
	ka, kb := a.ListKeys(), b.ListKeys()
	slices.Sort(ka)
	slices.Sort(kb)
	if !slices.Equal(ka, kb) {
		return fmt.Sprintf("keys %q vs %q", ka, kb)
	}
	for _, k := range ka {
		x, _, _ := a.GetByKey(k)
		y, _, _ := b.GetByKey(k)
		if !reflect.DeepEqual(x, y) {
			return fmt.Sprintf("%s: %#v vs %#v", k, x, y)
		}
	}
	return ""
}

// wrappedMetadata is a metadata client listwatch cannot see into.
type wrappedMetadata struct{ metadata.Interface }
