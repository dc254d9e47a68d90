package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/restsource"
)

// widgets is the custom resource testKinds installs.
var widgets = schema.GroupVersionResource{Group: "example.listwatch.io", Version: "v1", Resource: "widgets"}

// testKinds: a Source of PartialObjectMetadata and one of Unstructured,
// on a built-in resource and on a custom resource, list and watch what
// client-go's metadata and dynamic clients do, managedFields stripped
// when asked.
func testKinds(t *testing.T, e *env) {
	ctx := t.Context()
	dyn := dynamic.NewForConfigOrDie(e.cfg)
	if _, err := e.srv.InstallCRD(ctx, widgets.GroupVersion().WithKind("Widget")); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		w := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.listwatch.io/v1", "kind": "Widget",
			"metadata": map[string]any{"name": fmt.Sprintf("w-%02d", i), "labels": map[string]any{"app": "x"}},
			"spec":     map[string]any{"size": int64(i), "color": "blue", "ratio": 0.5, "tags": []any{"a", "b"}},
		}}
		if _, err := dyn.Resource(widgets).Namespace(e.ns).Create(ctx, w, metav1.CreateOptions{FieldManager: "writer"}); err != nil {
			t.Fatal(err)
		}
	}
	configmaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	meta := metadata.NewForConfigOrDie(e.cfg)
	for _, gvr := range []schema.GroupVersionResource{configmaps, widgets} {
		client := restClient(t, e.cfg, gvr.GroupVersion())
		for _, strip := range []bool{false, true} {
			name := fmt.Sprintf("%s/strip=%v", gvr.Resource, strip)
			t.Run("metadata/"+name, func(t *testing.T) {
				src, err := restsource.New[*metav1.PartialObjectMetadata](restsource.Options{Client: client, Resource: gvr.Resource,
					Namespace: e.ns, StripManagedFields: strip, Interner: restsource.NewInterner(0)})
				if err != nil {
					t.Fatal(err)
				}
				want, err := meta.Resource(gvr).Namespace(e.ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				got := listItems(t, src)
				if len(got) != len(want.Items) || len(got) == 0 {
					t.Fatalf("%d items, the metadata client's %d", len(got), len(want.Items))
				}
				for i := range got {
					w := want.Items[i].DeepCopy()
					w.TypeMeta = metav1.TypeMeta{}
					if strip {
						w.ManagedFields = nil
					}
					if !apiequality.Semantic.DeepEqual(got[i], w) {
						t.Errorf("item %d: %v, the metadata client's %v", i, got[i], w)
					}
				}
				sameEvents(t, src, func(o metav1.ListOptions) (watch.Interface, error) {
					return meta.Resource(gvr).Namespace(e.ns).Watch(ctx, o)
				}, func(o runtime.Object) runtime.Object {
					m := o.(*metav1.PartialObjectMetadata).DeepCopy()
					m.TypeMeta = metav1.TypeMeta{}
					if strip {
						m.ManagedFields = nil
					}
					return m
				})
			})
			t.Run("unstructured/"+name, func(t *testing.T) {
				gvk := gvr.GroupVersion().WithKind(map[string]string{"configmaps": "ConfigMap", "widgets": "Widget"}[gvr.Resource])
				src, err := restsource.New[*unstructured.Unstructured](restsource.Options{Client: client, Resource: gvr.Resource,
					Namespace: e.ns, GroupVersionKind: gvk, StripManagedFields: strip, Interner: restsource.NewInterner(0)})
				if err != nil {
					t.Fatal(err)
				}
				want, err := dyn.Resource(gvr).Namespace(e.ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				got := listItems(t, src)
				if len(got) != len(want.Items) || len(got) == 0 {
					t.Fatalf("%d items, the dynamic client's %d", len(got), len(want.Items))
				}
				for i := range got {
					w := want.Items[i].DeepCopy()
					if strip {
						unstructured.RemoveNestedField(w.Object, "metadata", "managedFields")
					}
					if !apiequality.Semantic.DeepEqual(got[i], w) {
						t.Errorf("item %d: %v, the dynamic client's %v", i, got[i], w)
					}
				}
				sameEvents(t, src, func(o metav1.ListOptions) (watch.Interface, error) {
					return dyn.Resource(gvr).Namespace(e.ns).Watch(ctx, o)
				}, func(o runtime.Object) runtime.Object {
					u := o.(*unstructured.Unstructured).DeepCopy()
					if strip {
						unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
					}
					return u
				})
			})
		}
	}
}

// listItems lists with src and returns the objects.
func listItems(t *testing.T, src interface {
	ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error)
}) []runtime.Object {
	obj, err := src.ListWithContext(t.Context(), metav1.ListOptions{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	l := obj.(*metav1.List)
	var out []runtime.Object
	for _, it := range l.Items {
		out = append(out, it.Object)
	}
	for l.Continue != "" {
		obj, err = src.ListWithContext(t.Context(), metav1.ListOptions{Limit: 5, Continue: l.Continue})
		if err != nil {
			t.Fatal(err)
		}
		l = obj.(*metav1.List)
		for _, it := range l.Items {
			out = append(out, it.Object)
		}
	}
	return out
}

// sameEvents: a streaming list through src gives the events the client's
// watch gives (after want's objects pass through fix), bookmarks aside.
func sameEvents(t *testing.T, src interface {
	WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error)
}, client func(metav1.ListOptions) (watch.Interface, error), fix func(runtime.Object) runtime.Object) {
	opts := metav1.ListOptions{SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
	cw, err := client(opts)
	if err != nil {
		t.Fatal(err)
	}
	want := untilInitialEnd(t, cw)
	rw, err := src.WatchWithContext(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got := untilInitialEnd(t, rw)
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("%d events, the client's %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Type == watch.Bookmark {
			continue
		}
		if w := fix(want[i].Object); got[i].Type != want[i].Type || !apiequality.Semantic.DeepEqual(got[i].Object, w) {
			t.Errorf("event %d: %s %v, the client's %s %v", i, got[i].Type, got[i].Object, want[i].Type, w)
		}
	}
}

// untilInitialEnd collects the events of w up to the initial-events-end
// bookmark, whatever the objects' type, and stops w.
func untilInitialEnd(t *testing.T, w watch.Interface) []watch.Event {
	defer w.Stop()
	var out []watch.Event
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed before the bookmark")
			}
			out = append(out, ev)
			if ev.Type == watch.Bookmark {
				return out
			}
		case <-deadline:
			t.Fatal("no bookmark")
		}
	}
}

// restClient is a REST client for gv, as controller-runtime builds one.
func restClient(t *testing.T, cfg *rest.Config, gv schema.GroupVersion) rest.Interface {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	if gv.Group == "" {
		c.APIPath = "/api"
	}
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}
