package restsource

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
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
	in := newPass(NewInterner(0), walksAny, 0)
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
	in := newPass(NewInterner(0), walksAny, 0)
	b.ReportAllocs()
	for b.Loop() {
		in.anyObject(d)
	}
}

// crObject is a custom resource's shape: metadata and TypeMeta (whose
// strings the walker leaves to the metadata's own), a spec and a status.
type crObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              anyNode            `json:"spec"`
	Status            map[string]anyLeaf `json:"status"`
	Conditions        []metav1.Condition `json:"conditions"`
	Port              intstr.IntOrString `json:"port"`
}

// TestTypedJSONInternsAsTheWalker: a type the reflective walker interns
// has its strings interned by the JSON codec as it decodes them instead,
// the same strings shared (from the second sighting on) and the same left
// alone, and the walk skipped; a value the codec leaves to a
// json.Unmarshaler or kjson brings the walk back if it can hold strings
// the walk reaches (an IntOrString's), not otherwise (an interface's).
func TestTypedJSONInternsAsTheWalker(t *testing.T) {
	raw := `{"kind":"App","apiVersion":"example.com/v1","metadata":{"name":"app-1","namespace":"team","uid":"u-1","labels":{"app":"web"}},
		"spec":{"Name":"root","Labels":{"app":"web","tier":"fe"},"Children":[{"Name":"child","Byname":{"k":{"Kind":"Pod","Value":"v"}}}],
		"Next":{"Name":"next"},"Numbers":[1,2]},"status":{"health":{"Kind":"Healthy","Value":"ok"}},
		"conditions":[{"type":"Ready","status":"True","reason":"Synced","message":"","lastTransitionTime":"2026-01-02T03:04:05Z"}]}`
	decode := func(byCodec bool, data string) []*crObject {
		interner := NewInterner(0)
		var objs []*crObject
		for range 3 {
			var o crObject
			in := newPass(interner, walksAny, 0)
			if byCodec {
				walked, err := unmarshalInterned([]byte(data), &o, in)
				if err != nil || !walked {
					t.Fatalf("codec: walked %v, %v", walked, err)
				}
				in.decoded |= doneRest
			} else if err := unmarshalTyped([]byte(data), &o); err != nil {
				t.Fatal(err)
			}
			in.object(&o)
			objs = append(objs, &o)
		}
		return objs
	}
	byCodec, byWalk := decode(true, raw), decode(false, raw)
	if !reflect.DeepEqual(byCodec, byWalk) {
		t.Fatalf("the objects differ")
	}
	shared := func(objs []*crObject) map[string]bool {
		a, b := map[string]string{}, map[string]string{}
		stringsAt(reflect.ValueOf(objs[1]).Elem(), "", a)
		stringsAt(reflect.ValueOf(objs[2]).Elem(), "", b)
		out := map[string]bool{}
		for path, s := range a {
			out[path] = s != "" && unsafe.StringData(s) == unsafe.StringData(b[path])
		}
		return out
	}
	want := shared(byWalk)
	for path, got := range shared(byCodec) {
		if got != want[path] {
			t.Errorf("%s: shared %v by the codec, %v by the walker", path, got, want[path])
		}
	}
	if !want[".Spec.Name"] || want[".ObjectMeta.Name"] {
		t.Errorf("the comparison is vacuous: %v", want)
	}
	for data, want := range map[string]bool{`{"port":"http"}`: false, `{"spec":{"Name":"x","Any":{"k":"v"}}}`: true} {
		var o crObject
		walked, err := unmarshalInterned([]byte(data), &o, newPass(NewInterner(0), 0, 0))
		if err != nil || walked != want {
			t.Errorf("%s: walked %v (%v), want %v", data, walked, err, want)
		}
	}
}

// stringsAt collects the strings reachable from v's exported fields by
// path (a map's keys at path+"#key").
func stringsAt(v reflect.Value, path string, out map[string]string) {
	switch v.Kind() {
	case reflect.String:
		out[path] = v.String()
	case reflect.Pointer:
		if !v.IsNil() {
			stringsAt(v.Elem(), path, out)
		}
	case reflect.Slice:
		for i := range v.Len() {
			stringsAt(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			k := fmt.Sprint(it.Key())
			if it.Key().Kind() == reflect.String {
				out[path+"["+k+"]#key"] = it.Key().String()
			}
			stringsAt(it.Value(), path+"["+k+"]", out)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				stringsAt(v.Field(i), path+"."+f.Name, out)
			}
		}
	}
}
