package restsource

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// slimPod is a projection of corev1.Pod exercising every kind of field a
// projection may have: strings, named strings, integers, bools, pointers,
// nested projections, slices of projections, of strings and of generated
// types, maps, and types decoded by their own Unmarshal.
type slimPod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec              slimPodSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status            slimPodStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

type slimPodSpec struct {
	NodeName                      string               `json:"nodeName,omitempty" protobuf:"bytes,10,opt,name=nodeName"`
	RestartPolicy                 corev1.RestartPolicy `json:"restartPolicy,omitempty" protobuf:"bytes,3,opt,name=restartPolicy"`
	TerminationGracePeriodSeconds *int64               `json:"terminationGracePeriodSeconds,omitempty" protobuf:"varint,4,opt,name=terminationGracePeriodSeconds"`
	NodeSelector                  map[string]string    `json:"nodeSelector,omitempty" protobuf:"bytes,7,rep,name=nodeSelector"`
	Containers                    []slimContainer      `json:"containers" protobuf:"bytes,2,rep,name=containers"`
	Tolerations                   []corev1.Toleration  `json:"tolerations,omitempty" protobuf:"bytes,22,opt,name=tolerations"`
}

type slimContainer struct {
	Name      string                      `json:"name" protobuf:"bytes,1,opt,name=name"`
	Image     string                      `json:"image,omitempty" protobuf:"bytes,2,opt,name=image"`
	Args      []string                    `json:"args,omitempty" protobuf:"bytes,4,rep,name=args"`
	Ports     []slimPort                  `json:"ports,omitempty" protobuf:"bytes,6,rep,name=ports"`
	Resources corev1.ResourceRequirements `json:"resources,omitempty" protobuf:"bytes,8,opt,name=resources"`
}

type slimPort struct {
	ContainerPort int32           `json:"containerPort" protobuf:"varint,3,opt,name=containerPort"`
	Protocol      corev1.Protocol `json:"protocol,omitempty" protobuf:"bytes,4,opt,name=protocol,casttype=Protocol"`
}

type slimPodStatus struct {
	Phase             corev1.PodPhase       `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=PodPhase"`
	StartTime         *metav1.Time          `json:"startTime,omitempty" protobuf:"bytes,7,opt,name=startTime"`
	ContainerStatuses []slimContainerStatus `json:"containerStatuses,omitempty" protobuf:"bytes,8,rep,name=containerStatuses"`
}

type slimContainerStatus struct {
	Name         string `json:"name" protobuf:"bytes,1,opt,name=name"`
	Ready        bool   `json:"ready" protobuf:"varint,4,opt,name=ready"`
	RestartCount int32  `json:"restartCount" protobuf:"varint,5,opt,name=restartCount"`
	Started      *bool  `json:"started,omitempty" protobuf:"varint,9,opt,name=started"`
}

func (p *slimPod) DeepCopyObject() runtime.Object {
	q := *p // enough for the tests, which never modify the objects
	return &q
}

// project copies into dst the fields of src that dst declares, matched by
// JSON name: "full decode, then copy those fields", the reference the
// projection decoder must equal.
func project(dst, src reflect.Value) {
	if dst.Type() == src.Type() {
		dst.Set(src)
		return
	}
	switch dst.Kind() {
	case reflect.Struct:
		byName := map[string]reflect.Value{}
		for i := range src.NumField() {
			byName[jsonName(src.Type().Field(i))] = src.Field(i)
		}
		for i := range dst.NumField() {
			project(dst.Field(i), byName[jsonName(dst.Type().Field(i))])
		}
	case reflect.Pointer:
		if !src.IsNil() {
			dst.Set(reflect.New(dst.Type().Elem()))
			project(dst.Elem(), src.Elem())
		}
	case reflect.Slice:
		if !src.IsNil() {
			dst.Set(reflect.MakeSlice(dst.Type(), src.Len(), src.Len()))
			for i := range src.Len() {
				project(dst.Index(i), src.Index(i))
			}
		}
	case reflect.Map:
		if !src.IsNil() {
			dst.Set(reflect.MakeMap(dst.Type()))
			for it := src.MapRange(); it.Next(); {
				v := reflect.New(dst.Type().Elem()).Elem()
				project(v, it.Value())
				dst.SetMapIndex(it.Key().Convert(dst.Type().Key()), v)
			}
		}
	default:
		dst.Set(src.Convert(dst.Type()))
	}
}

type slimDecoder = objectDecoder[*slimPod]

func newSlimDecoder(t testing.TB, opts Options) *slimDecoder {
	t.Helper()
	opts.Scheme, opts.ProjectionOf = scheme.Scheme, &corev1.Pod{}
	d, err := newTypedDecoder[*slimPod](opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// slimPaths decodes data through each path of its encoding.
var slimPaths = map[bool][]func(d *slimDecoder, data []byte) (runtime.Object, error){
	false: {
		func(d *slimDecoder, msg []byte) (runtime.Object, error) { return d.protobuf(wrapUnknown(msg), false) },
		func(d *slimDecoder, msg []byte) (runtime.Object, error) { return d.message(bytes.Clone(msg), nil) },
	},
	true: {
		func(d *slimDecoder, obj []byte) (runtime.Object, error) { return d.json(withKind(obj), false) },
		func(d *slimDecoder, obj []byte) (runtime.Object, error) { return d.jsonItem(bytes.Clone(obj)) },
	},
}

// checkProjection decodes data in full with ref and as a projection with
// got through path i, and requires the projection to equal the full
// object's projected fields (without managedFields if got strips them).
// It returns false if the full decoding fails.
func checkProjection(t *testing.T, what string, ref *objectDecoder[*corev1.Pod], got *slimDecoder, isJSON bool, i int, data []byte) bool {
	t.Helper()
	full, err := []decodePath{protoPaths[i], jsonPaths[i]}[map[bool]int{false: 0, true: 1}[isJSON]].decode(ref, bytes.Clone(data))
	if err != nil {
		return false
	}
	if got.strip {
		full.(*corev1.Pod).ManagedFields = nil
	}
	want := &slimPod{}
	project(reflect.ValueOf(want).Elem(), reflect.ValueOf(full).Elem())
	obj, err := slimPaths[isJSON][i](got, bytes.Clone(data))
	if err != nil {
		t.Fatalf("%s: the full object decodes, the projection fails: %v", what, err)
	}
	if !reflect.DeepEqual(obj, want) {
		t.Fatalf("%s: projection differs from full decode then copy (-want +got):\n%s", what, cmp.Diff(want, obj))
	}
	return true
}

// TestProjectionDifferential: on the corpus (and the encodings with
// metadata in unusual places), a projection decoded straight from
// protobuf or JSON equals the full object's fields copied into it, with
// and without the memory options, for watch events' objects and list
// items.
func TestProjectionDifferential(t *testing.T) {
	ref, err := newTypedDecoder[*corev1.Pod](Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{{}, {StripManagedFields: true, Interner: NewInterner(0)}} {
		got := newSlimDecoder(t, opts)
		for n, p := range corpusPods(30, 5) {
			p.Spec.NodeSelector = map[string]string{"disk": "ssd", "zone": "a"}
			for name, msg := range protoVariants(t, p) {
				for i := range 2 {
					if !checkProjection(t, "protobuf "+name, ref, got, false, i, msg) {
						t.Fatalf("pod %d protobuf %s: the full decoder fails", n, name)
					}
				}
			}
			for name, obj := range jsonVariants(t, p) {
				for i := range 2 {
					if !checkProjection(t, "json "+name, ref, got, true, i, obj) {
						t.Fatalf("pod %d json %s: the full decoder fails", n, name)
					}
				}
			}
		}
	}
}

// TestProjectionChecked: New refuses projections whose fields do not match
// the source type's, or that it cannot decode.
func TestProjectionChecked(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{newProj[*badNumberPod](), "protobuf number"},
		{newProj[*badNamePod](), "has no field \"node\""},
		{newProj[*badTypePod](), "does not decode as"},
		{newProj[*corev1.Pod](), "not a projection"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("err = %v, want one containing %q", c.err, c.want)
		}
	}
}

// Named versions of the bad projections, with the runtime.Object methods
// a Source needs.
type (
	badNumberPod struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
		Spec              struct {
			NodeName string `json:"nodeName" protobuf:"bytes,11,opt,name=nodeName"`
		} `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	}
	badNamePod struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
		Node              string `json:"node" protobuf:"bytes,10,opt,name=node"`
	}
	badTypePod struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
		Status            struct {
			Phase int32 `json:"phase" protobuf:"bytes,1,opt,name=phase"`
		} `json:"status" protobuf:"bytes,3,opt,name=status"`
	}
)

func (p *badNumberPod) DeepCopyObject() runtime.Object { return p }
func (p *badNamePod) DeepCopyObject() runtime.Object   { return p }
func (p *badTypePod) DeepCopyObject() runtime.Object   { return p }

func newProj[T interface {
	*E
	runtime.Object
}, E any]() error {
	_, err := newTypedDecoder[T](Options{Scheme: scheme.Scheme, ProjectionOf: &corev1.Pod{}})
	return err
}

// FuzzProjection: whatever the bytes, decoding a projection does not
// panic, and when the full decoder decodes them, the projection equals
// the full object's fields copied into it. isJSON selects the encoding: a
// pod's protobuf message or JSON object.
func FuzzProjection(f *testing.F) {
	for _, p := range corpusPods(3, 6) {
		for _, msg := range protoVariants(f, p) {
			f.Add(msg, false)
		}
		for _, obj := range jsonVariants(f, p) {
			f.Add(obj, true)
		}
	}
	ref, err := newTypedDecoder[*corev1.Pod](Options{Scheme: scheme.Scheme})
	if err != nil {
		f.Fatal(err)
	}
	got := newSlimDecoder(f, Options{StripManagedFields: true})
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		for i := range 2 {
			if !checkProjection(t, "fuzz", ref, got, isJSON, i, data) {
				_, _ = slimPaths[isJSON][i](got, bytes.Clone(data)) // must not panic
			}
		}
	})
}

// TestProjectionMapEntryQuirk: the generated decoders let a map entry's
// value run past the entry's end, into the rest of the message (which
// they then decode again from the entry's end); a projection decodes such
// bytes the same.
func TestProjectionMapEntryQuirk(t *testing.T) {
	ref, err := newTypedDecoder[*corev1.Pod](Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	entry := []byte{0x0a, 0x01, 'k', 0x12, 0x03}                                      // key "k", value of 3 bytes: past the entry
	spec := append(append([]byte{0x3a, byte(len(entry))}, entry...), 0x52, 0x01, 'n') // nodeSelector, nodeName "n"
	msg := bytesField(2, spec)
	full, err := ref.message(msg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := full; p.Spec.NodeSelector["k"] != "R\x01n" || p.Spec.NodeName != "n" {
		t.Fatalf("the generated decoder reads %q and %q: the quirk is gone", p.Spec.NodeSelector, p.Spec.NodeName)
	}
	for i := range 2 {
		checkProjection(t, "map entry quirk", ref, newSlimDecoder(t, Options{}), false, i, msg)
	}
}
