package crcache_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/listwatch/listwatch/crcache"
	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// Widget is a custom resource's Go type, as kubebuilder generates them.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec `json:"spec,omitempty"`
}

type WidgetSpec struct {
	Size  int64    `json:"size,omitempty"`
	Color string   `json:"color,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

func (w *Widget) DeepCopyObject() runtime.Object {
	c := *w
	w.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Spec.Tags = slices.Clone(w.Spec.Tags)
	return &c
}

func (l *WidgetList) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = make([]Widget, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Widget)
	}
	return &c
}

var widgetKind = schema.GroupVersionKind{Group: "example.listwatch.io", Version: "v1", Kind: "Widget"}

// widgetScheme is client-go's scheme with Widget.
func widgetScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	s.AddKnownTypes(widgetKind.GroupVersion(), &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, widgetKind.GroupVersion())
	return s
}

// startCache starts a cache built by newCache and stops it at cleanup.
func startCache(t *testing.T, newCache cache.NewCacheFunc, cfg *testapiserver.Server, opts cache.Options, unprivileged bool) cache.Cache {
	rc := cfg.AdminConfig()
	if unprivileged {
		rc = cfg.UnprivilegedConfig()
	}
	c, err := newCache(rc, opts)
	if err != nil {
		t.Fatal(err)
	}
	runCache(t, c, "")
	return c
}

// A custom resource installed after the cache started: before, its kind
// is unknown (an error, not a hang); after, its typed objects (listed in
// Options.Types, or only known to the scheme), unstructured and
// metadata-only ones all decode with restsource (no fallback logged),
// equal to the server's without managedFields.
func testCustomResources(t *testing.T, srv *testapiserver.Server) {
	ctx := t.Context()
	var mu sync.Mutex
	var fallbacks []string
	logger := funcr.New(func(_, args string) {
		mu.Lock()
		defer mu.Unlock()
		fallbacks = append(fallbacks, args)
	}, funcr.Options{Verbosity: 1})
	newCache := crcache.NewWithOptions(crcache.Options{Types: []crcache.Type{crcache.TypeFor[*Widget]()}, Logger: logger})
	listed := startCache(t, newCache, srv, cache.Options{Scheme: widgetScheme(t)}, false)
	if !listed.WaitForCacheSync(ctx) {
		t.Fatal("not synced")
	}
	if _, err := listed.GetInformer(ctx, &Widget{}); !meta.IsNoMatchError(err) {
		t.Fatalf("GetInformer before the CRD is installed: %v, want a no-match error", err)
	}
	gvr, err := srv.InstallCRD(ctx, widgetKind)
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(srv.AdminConfig())
	for i := range 6 {
		w := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": widgetKind.GroupVersion().String(), "kind": "Widget",
			"metadata": map[string]any{"name": fmt.Sprintf("w%d", i), "labels": map[string]any{"app": "x"}},
			"spec":     map[string]any{"size": int64(i), "color": "blue", "tags": []any{"a", "b"}},
		}}
		if _, err := dyn.Resource(gvr).Namespace("a").Create(ctx, w, metav1.CreateOptions{FieldManager: "writer"}); err != nil {
			t.Fatal(err)
		}
	}
	server, err := dyn.Resource(gvr).Namespace("a").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range server.Items {
		if len(server.Items[i].GetManagedFields()) == 0 {
			t.Fatal("the server wrote no managedFields")
		}
		unstructured.RemoveNestedField(server.Items[i].Object, "metadata", "managedFields")
	}

	unlisted := startCache(t, crcache.NewWithOptions(crcache.Options{Logger: logger}), srv, cache.Options{Scheme: widgetScheme(t)}, false)
	for _, c := range []cache.Cache{listed, unlisted} {
		checkWidgets(t, c, server)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(fallbacks) != 0 {
		t.Fatalf("fell back to controller-runtime's client: %v", fallbacks)
	}
}

// checkWidgets checks that c lists the widgets of namespace a as server
// (without managedFields) typed, unstructured and metadata-only.
func checkWidgets(t *testing.T, c cache.Cache, server *unstructured.UnstructuredList) {
	ctx := t.Context()
	var typed WidgetList
	if err := c.List(ctx, &typed, client.InNamespace("a")); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.UnstructuredList{}
	u.SetGroupVersionKind(widgetKind.GroupVersion().WithKind("WidgetList"))
	if err := c.List(ctx, u, client.InNamespace("a")); err != nil {
		t.Fatal(err)
	}
	m := &metav1.PartialObjectMetadataList{}
	m.SetGroupVersionKind(widgetKind.GroupVersion().WithKind("WidgetList"))
	if err := c.List(ctx, m, client.InNamespace("a")); err != nil {
		t.Fatal(err)
	}
	if len(typed.Items) != len(server.Items) || len(u.Items) != len(server.Items) || len(m.Items) != len(server.Items) {
		t.Fatalf("typed %d, unstructured %d, metadata %d widgets; the server has %d", len(typed.Items), len(u.Items), len(m.Items), len(server.Items))
	}
	byName := func(name string) unstructured.Unstructured {
		i := slices.IndexFunc(server.Items, func(s unstructured.Unstructured) bool { return s.GetName() == name })
		return server.Items[i]
	}
	for i := range typed.Items {
		want := byName(typed.Items[i].Name)
		var asWidget Widget
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(want.Object, &asWidget); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&typed.Items[i], &asWidget) {
			t.Errorf("typed widget:\n got %+v\nwant %+v", &typed.Items[i], &asWidget)
		}
	}
	for i := range u.Items {
		if want := byName(u.Items[i].GetName()); !apiequality.Semantic.DeepEqual(u.Items[i], want) {
			t.Errorf("unstructured widget:\n got %v\nwant %v", u.Items[i].Object, want.Object)
		}
	}
	for i := range m.Items {
		want := byName(m.Items[i].Name)
		if m.Items[i].UID != want.GetUID() || m.Items[i].ResourceVersion != want.GetResourceVersion() ||
			m.Items[i].ManagedFields != nil || m.Items[i].Kind != "Widget" || !reflect.DeepEqual(m.Items[i].Labels, want.GetLabels()) {
			t.Errorf("metadata of a widget: %+v, want the server's %v", m.Items[i], want.Object["metadata"])
		}
	}
}

// A user RBAC does not allow to list pods: GetInformer, Get and List
// return the server's Forbidden error at once, instead of waiting for a
// sync that cannot come; with controller-runtime's own cache they block
// until the context ends.
func testForbidden(t *testing.T, srv *testapiserver.Server) {
	c := startCache(t, crcache.New, srv, cache.Options{}, true)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.GetInformer(ctx, &corev1.Pod{})
	if !apierrors.IsForbidden(err) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GetInformer: %v, want the server's Forbidden", err)
	}
	t.Logf("GetInformer returned after %v: %v", time.Since(start).Round(time.Millisecond), err)
	if err := c.Get(ctx, client.ObjectKey{Namespace: "a", Name: "p0"}, &corev1.Pod{}); !apierrors.IsForbidden(err) {
		t.Fatalf("Get: %v, want the server's Forbidden", err)
	}
	if err := c.List(ctx, &corev1.PodList{}); !apierrors.IsForbidden(err) {
		t.Fatalf("List: %v, want the server's Forbidden", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the context ended: the calls waited for it")
	}
}
