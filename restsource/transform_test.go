package restsource_test

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/restsource"
)

// compactPod is a pod of one template: every string its own allocation,
// as decoding makes them.
func compactPod(name string) *corev1.Pod {
	c := strings.Clone
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: c("shop"), Name: name, Labels: map[string]string{c("app"): c("web")},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: c("kubectl"), Operation: metav1.ManagedFieldsOperationUpdate}},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: c("web"), Image: c("nginx:1.27"),
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
		}}},
	}
}

// CompactTransform strips managedFields and, with an Interner, makes the
// pods of one template share their strings (from the second sighting on,
// as the Interner admits them) and, with shareResourceLists, their
// ResourceLists; the objects stay equal to the stripped originals.
func TestCompactTransform(t *testing.T) {
	for _, share := range []bool{false, true} {
		transform := restsource.CompactTransform(restsource.NewInterner(0), share)
		var pods []*corev1.Pod
		for _, name := range []string{"a", "b", "c"} {
			p := compactPod(name)
			want := p.DeepCopy()
			want.ManagedFields = nil
			out, err := transform(p)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(out, want) {
				t.Fatalf("transformed pod %s:\n got %+v\nwant %+v", name, out, want)
			}
			pods = append(pods, out.(*corev1.Pod))
		}
		b, c := pods[1], pods[2]
		if unsafe.StringData(b.Namespace) != unsafe.StringData(c.Namespace) || unsafe.StringData(b.Spec.Containers[0].Image) != unsafe.StringData(c.Spec.Containers[0].Image) {
			t.Errorf("share=%v: the namespace and image of two pods of one template are not one string", share)
		}
		sameMap := reflect.ValueOf(b.Spec.Containers[0].Resources.Requests).UnsafePointer() == reflect.ValueOf(c.Spec.Containers[0].Resources.Requests).UnsafePointer()
		if sameMap != share {
			t.Errorf("share=%v: two pods' equal requests are one map: %v", share, sameMap)
		}
	}

	// Without an Interner only managedFields go; unstructured objects
	// lose theirs too; a tombstone passes unchanged.
	transform := restsource.CompactTransform(nil, false)
	out, err := transform(compactPod("a"))
	if err != nil || out.(*corev1.Pod).ManagedFields != nil {
		t.Fatalf("without an Interner: %v, managedFields %v", err, out.(*corev1.Pod).ManagedFields)
	}
	u := &unstructured.Unstructured{}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl"}})
	if out, err := transform(u); err != nil || out.(*unstructured.Unstructured).GetManagedFields() != nil {
		t.Fatalf("unstructured: %v, managedFields %v", err, out.(*unstructured.Unstructured).GetManagedFields())
	}
	tomb := cache.DeletedFinalStateUnknown{Key: "shop/a"}
	if out, err := transform(tomb); err != nil || out != tomb {
		t.Fatalf("tombstone: %v, %v", out, err)
	}
}
