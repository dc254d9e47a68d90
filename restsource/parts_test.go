package restsource

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
)

// TestDeclarations: every field of every message of parts_kinds.go is the
// Go field its protobuf number and JSON name say (from the Go type's
// protobuf and json tags), so that neither half of a declaration can name
// another field than the other; a JSON name is left out only where the
// JSON is decoded elsewhere.
func TestDeclarations(t *testing.T) {
	jsonElsewhere := map[string]bool{ // Go type.field: why its JSON is not cut here
		"v1.ObjectMeta.Labels": true, "v1.ObjectMeta.Annotations": true, "v1.ObjectMeta.OwnerReferences": true, // json_meta.go
		"v1.Pod.ObjectMeta": true, "v1.ConfigMap.ObjectMeta": true, // json_meta.go
		"v1.Volume.VolumeSource":  true, // inline in JSON: volumeJSON (parts_lists.go) cuts the name out
		"v1.ConfigMap.BinaryData": true, // base64 in JSON: nothing to intern
	}
	if len(declarations) < 8 {
		t.Fatalf("%d messages declared, want at least 8", len(declarations))
	}
	for _, m := range declarations {
		typ := m.goType()
		for _, f := range m.declared() {
			sf, ok := fieldAt(typ, f.offset)
			if !ok {
				t.Fatalf("%s: no field at offset %d (field %d %q)", typ, f.offset, f.num, f.name)
			}
			what := typ.String() + "." + sf.Name
			ptag := strings.Split(sf.Tag.Get("protobuf"), ",")
			if len(ptag) < 2 || ptag[0] != "bytes" || ptag[1] != strconv.Itoa(int(f.num)) {
				t.Errorf("%s is declared as protobuf field %d, its tag says %q", what, f.num, sf.Tag.Get("protobuf"))
			}
			jname := strings.Split(sf.Tag.Get("json"), ",")[0]
			switch {
			case f.name == "" && !jsonElsewhere[what]:
				t.Errorf("%s has no JSON name (its JSON is %q) and is not listed as decoded elsewhere", what, jname)
			case f.name != "" && f.name != jname:
				t.Errorf("%s is declared as JSON member %q, its tag says %q", what, f.name, jname)
			}
		}
	}
}

// fieldAt returns the field of the struct typ at offset.
func fieldAt(typ reflect.Type, offset uintptr) (reflect.StructField, bool) {
	for i := range typ.NumField() {
		if f := typ.Field(i); f.Offset == offset && f.Type.Size() > 0 {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// partsCorpora are objects of every kind of partKinds, and of a kind
// decoded with its metadata's parts only.
var partsCorpora = map[reflect.Type]func(t *testing.T){
	reflect.TypeFor[*corev1.Pod](): func(t *testing.T) { decodesLikeClientGo(t, corpusPods(40, 9)) },
	reflect.TypeFor[*corev1.ConfigMap](): func(t *testing.T) {
		cms := make([]*corev1.ConfigMap, 12)
		for i := range cms {
			cms[i] = testConfigMap(i % 4)
			cms[i].BinaryData = map[string][]byte{"blob": []byte(fmt.Sprint("bytes-", i%2))}
		}
		decodesLikeClientGo(t, cms)
	},
	reflect.TypeFor[*appsv1.Deployment](): func(t *testing.T) {
		ds := make([]*appsv1.Deployment, 6)
		for i := range ds {
			p := corpusPods(1, uint64(i%2))[0]
			ds[i] = &appsv1.Deployment{ObjectMeta: p.ObjectMeta, Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To(int32(i)), Selector: &metav1.LabelSelector{MatchLabels: p.Labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: p.Labels}, Spec: p.Spec}}}
			ds[i].Name = fmt.Sprint("d", i)
		}
		decodesLikeClientGo(t, ds)
	},
}

// TestPartsDecodeLikeClientGo: every kind decoded in parts (and one
// decoded with its metadata's parts only), from protobuf and from JSON,
// through an event's path and a list item's, decodes as client-go's
// clientset decodes it, minus managedFields, with StripManagedFields,
// an Interner and ShareRepeated; a kind decoded in parts without a corpus
// here fails the test.
func TestPartsDecodeLikeClientGo(t *testing.T) {
	for typ := range partKinds {
		if partsCorpora[typ] == nil {
			t.Errorf("%s is decoded in parts (partKinds) but has no corpus in partsCorpora", typ)
		}
	}
	for typ, run := range partsCorpora {
		t.Run(typ.Elem().Name(), run)
	}
}

// decodesLikeClientGo checks objs as TestPartsDecodeLikeClientGo says.
func decodesLikeClientGo[T interface {
	*E
	runtime.Object
	Marshal() ([]byte, error)
}, E any](t *testing.T, objs []T) {
	in := NewInterner(0)
	d, err := newTypedDecoder[T](Options{Scheme: scheme.Scheme, Interner: in, ShareRepeated: true, StripManagedFields: true})
	if err != nil {
		t.Fatal(err)
	}
	if !d.shareParts || (partKinds[reflect.TypeFor[T]()] != nil) != (d.kind != nil) {
		t.Fatalf("%T: shareParts %v, decoded whole %v", T(nil), d.shareParts, d.kind != nil)
	}
	gvks, _, err := scheme.Scheme.ObjectKinds(T(new(E)))
	if err != nil {
		t.Fatal(err)
	}
	gvk := gvks[0]
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	pb := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	for round := range 2 { // the second round hits the shared parts of the first
		for i, o := range objs {
			o.GetObjectKind().SetGroupVersionKind(gvk)
			msg, err := o.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			event, err := json.Marshal(o) // an event's object has its kind
			if err != nil {
				t.Fatal(err)
			}
			// client-go's decoding of the same bytes, as its clientset does.
			var whole strings.Builder
			if err := pb.Encode(o, &whole); err != nil {
				t.Fatal(err)
			}
			o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			item, err := json.Marshal(o) // a list's item has none
			if err != nil {
				t.Fatal(err)
			}
			want := T(new(E))
			if _, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(whole.String()), nil, want); err != nil {
				t.Fatal(err)
			}
			objectMetaOf(want).ManagedFields = nil
			want.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			for _, c := range []struct {
				path   string
				decode func() (runtime.Object, error)
			}{
				{"protobuf event", func() (runtime.Object, error) { return d.protobuf(wrapUnknownAs(msg, apiVersion, kind), false) }},
				{"protobuf item", func() (runtime.Object, error) { return d.message(append([]byte(nil), msg...), nil) }},
				{"json event", func() (runtime.Object, error) { return d.json(event, false) }},
				{"json item", func() (runtime.Object, error) { return d.jsonItem(append([]byte(nil), item...)) }},
			} {
				got, err := c.decode()
				if err != nil {
					t.Fatalf("round %d, %T %d, %s: %v", round, o, i, c.path, err)
				}
				if !reflect.DeepEqual(got, runtime.Object(want)) {
					t.Fatalf("round %d, %T %d, %s: differs from client-go's decoding (-client-go +restsource):\n%s",
						round, o, i, c.path, cmp.Diff(runtime.Object(want), got))
				}
			}
		}
	}
	if st := in.Stats(); st.Parts.Hits == 0 {
		t.Fatalf("no part was shared: %+v", st.Parts)
	}
}
