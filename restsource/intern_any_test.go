package restsource

import (
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// anyNode is a type the walker plans: nested structs, pointers, slices,
// maps (named string maps, struct values), recursion, an unexported field
// and an interface.
type anyNode struct {
	Name     string
	Labels   namedStringMap
	Children []*anyNode
	Byname   map[string]anyLeaf
	Next     *anyNode
	Any      any
	Numbers  []int
	hidden   string
}

type namedStringMap map[string]string

type anyLeaf struct{ Kind, Value string }

func newAnyNode(t *testing.T) *anyNode {
	var n anyNode
	raw := `{"Name":"root","Labels":{"app":"web"},"Children":[{"Name":"child","Byname":{"k":{"Kind":"Pod","Value":"v"}}}],
		"Next":{"Name":"next","Labels":{"app":"web"}},"Any":"free","Numbers":[1,2]}`
	if err := json.Unmarshal([]byte(raw), &n); err != nil {
		t.Fatal(err)
	}
	n.hidden = string([]byte("hidden"))
	return &n
}

// TestAnyObjectInterns: the reflective walker leaves an object equal to
// itself and shares its strings with the objects before it (from the
// second sighting on, as the Interner admits), map keys and values and
// recursive types included; unexported fields and interfaces are left.
func TestAnyObjectInterns(t *testing.T) {
	in := &interning{Interner: NewInterner(0), walkAny: true}
	var objs []*anyNode
	for range 3 {
		n := newAnyNode(t)
		want := newAnyNode(t)
		want.hidden = n.hidden
		in.object(n)
		if !reflect.DeepEqual(n, want) {
			t.Fatalf("the walk changed the object:\n got %+v\nwant %+v", n, want)
		}
		objs = append(objs, n)
	}
	a, b := objs[1], objs[2]
	same := func(what string, x, y string) {
		if unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s: not shared", what)
		}
	}
	same("a field", a.Name, b.Name)
	same("a named map's value", a.Labels["app"], b.Labels["app"])
	same("a struct in a map", a.Children[0].Byname["k"].Kind, b.Children[0].Byname["k"].Kind)
	same("a recursive type's field", a.Next.Labels["app"], b.Next.Labels["app"])
	if unsafe.StringData(a.hidden) == unsafe.StringData(b.hidden) {
		t.Error("an unexported field was interned")
	}
	if planOf(reflect.TypeFor[struct{ N []int }]()) != nil {
		t.Error("a type without strings has a plan")
	}
}

// BenchmarkAnyObject: the reflective walk of a decoded Deployment (a pod
// template's worth of strings), as it would cost if built-in kinds were
// walked: compare with BenchmarkDecodeShared/deployments.
func BenchmarkAnyObject(b *testing.B) {
	p := corpusPods(1, 3)[0]
	d := &appsv1.Deployment{ObjectMeta: p.ObjectMeta, Spec: appsv1.DeploymentSpec{
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: p.Labels}, Spec: p.Spec}}}
	in := &interning{Interner: NewInterner(0), walkAny: true}
	b.ReportAllocs()
	for b.Loop() {
		in.anyObject(d)
	}
}
