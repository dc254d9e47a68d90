package fakeapi_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
)

// controller-runtime's client finds its REST mappings through the served
// discovery and writes typed, unstructured and metadata-only objects.
func TestControllerRuntimeClient(t *testing.T) {
	ctx := t.Context()
	srv, cfg, _ := serve(t, fakeapi.Options{})
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: "cr-"}, Data: map[string]string{"a": "1"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	var got corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil {
		t.Fatal(err)
	}
	base := got.DeepCopy()
	got.Data["b"] = "2"
	if err := c.Patch(ctx, &got, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		t.Fatal(err)
	}
	// The same optimistic-lock patch from the stale base conflicts.
	stale := base.DeepCopy()
	stale.Data["c"] = "3"
	if err := c.Patch(ctx, stale, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err == nil {
		t.Error("a merge patch pinned to a stale resourceVersion succeeded")
	} else {
		wantStatus(t, "stale optimistic-lock patch", err, 409, metav1.StatusReasonConflict)
	}
	obj, err := srv.Get(ctx, fake.ConfigMaps().GVR, "ns", cm.Name)
	if err != nil {
		t.Fatal(err)
	}
	if d := obj.(*corev1.ConfigMap).Data; len(d) != 2 || d["b"] != "2" {
		t.Errorf("the fake holds data %v, want a and b", d)
	}

	var list corev1.ConfigMapList
	if err := c.List(ctx, &list, client.InNamespace("ns")); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.ResourceVersion != srv.ResourceVersion() {
		t.Errorf("listed %d items at RV %s, want 1 at %s", len(list.Items), list.ResourceVersion, srv.ResourceVersion())
	}

	w := &unstructured.Unstructured{}
	w.SetAPIVersion("example.com/v1")
	w.SetKind("Widget")
	w.SetNamespace("ns")
	w.SetName("w")
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	if w.GetUID() == "" {
		t.Error("the created widget has no UID")
	}

	// Metadata only, through controller-runtime and client-go's metadata
	// client.
	pom := &metav1.PartialObjectMetadata{}
	pom.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), pom); err != nil {
		t.Fatal(err)
	}
	if pom.ResourceVersion != got.ResourceVersion {
		t.Errorf("metadata-only get at RV %s, want %s", pom.ResourceVersion, got.ResourceVersion)
	}
	mc := metadata.NewForConfigOrDie(cfg).Resource(fake.ConfigMaps().GVR).Namespace("ns")
	ml, err := mc.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ml.Items) != 1 || ml.Items[0].Name != cm.Name {
		t.Errorf("metadata list %+v, want %s", ml.Items, cm.Name)
	}

	if err := c.Delete(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, &got); err == nil {
		t.Error("a second delete succeeded")
	} else {
		wantStatus(t, "second delete", err, 404, metav1.StatusReasonNotFound)
	}
}
