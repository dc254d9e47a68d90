package restsource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
)

// sharedDecoders returns the reference decoder of T and one with an
// Interner and ShareRepeated (and StripManagedFields if strip).
func sharedDecoders[T interface {
	*E
	runtime.Object
}, E any](t *testing.T, strip bool) (ref, got *objectDecoder[T], in *Interner) {
	t.Helper()
	in = NewInterner(0)
	ref, err := newTypedDecoder[T](Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	got, err = newTypedDecoder[T](Options{Scheme: scheme.Scheme, Interner: in, ShareRepeated: true, StripManagedFields: strip})
	if err != nil {
		t.Fatal(err)
	}
	if !got.shareParts {
		t.Fatalf("%T is not decoded in parts", T(new(E)))
	}
	return ref, got, in
}

// testConfigMap is ConfigMap i of a namespace's set: a CA bundle the same
// everywhere, a chart's file the same in every namespace (too long to
// intern), a file unique to the namespace, and labels per chart.
func testConfigMap(i int) *corev1.ConfigMap {
	ns := fmt.Sprintf("team-%d", i)
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-config", UID: types.UID(fmt.Sprint("uid-", i)),
			Labels: map[string]string{"app": "shop", "chart": "shop-1.2"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate,
				FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{}}`)}}},
		Data: map[string]string{
			"ca.crt":       strings.Repeat("MIIDBTCCAe2gAwIBAgIIQm8tZ2VuZXJhdGVk", 40),
			"logging.yaml": strings.Repeat("level: info\n", 40),
			"config.yaml":  strings.Repeat("namespace: "+ns+"\n", 30),
			"flags":        `{"a":true}`,
		},
	}
}

// TestSharedPartsConfigMaps: ConfigMaps decoded in parts equal the plain
// decoding (stripped or not, through both protobuf paths), and share
// their long values where they repeat, their labels and, for equal data,
// the whole data map.
func TestSharedPartsConfigMaps(t *testing.T) {
	for _, strip := range []bool{false, true} {
		ref, got, in := sharedDecoders[*corev1.ConfigMap](t, strip)
		var decoded []*corev1.ConfigMap
		for i := range 6 {
			cm := testConfigMap(i)
			if i >= 4 {
				cm.Data = map[string]string{"ca.crt": cm.Data["ca.crt"]} // the same data from here on
			}
			msg, err := cm.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			want, err := ref.message(bytes.Clone(msg), nil)
			if err != nil {
				t.Fatal(err)
			}
			if strip {
				want.ManagedFields = nil
			}
			for _, decode := range []func() (*corev1.ConfigMap, error){
				func() (*corev1.ConfigMap, error) { return got.message(bytes.Clone(msg), nil) },
				func() (*corev1.ConfigMap, error) {
					obj, err := got.protobuf(wrapUnknownAs(msg, "v1", "ConfigMap"), false)
					cm, _ := obj.(*corev1.ConfigMap)
					return cm, err
				},
			} {
				cm, err := decode()
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(cm, want) {
					t.Fatalf("configmap %d strip=%v: (-want +got):\n%s", i, strip, cmp.Diff(want, cm))
				}
				decoded = append(decoded, cm)
			}
		}
		last := decoded[len(decoded)-1]
		if unsafe.StringData(decoded[5].Data["logging.yaml"]) != unsafe.StringData(decoded[7].Data["logging.yaml"]) {
			t.Error("a long value that repeats is not shared")
		}
		if unsafe.StringData(decoded[5].Data["config.yaml"]) == unsafe.StringData(decoded[7].Data["config.yaml"]) {
			t.Error("values unique to a namespace are shared")
		}
		if reflect.ValueOf(last.Data).UnsafePointer() != reflect.ValueOf(decoded[len(decoded)-2].Data).UnsafePointer() {
			t.Error("equal data maps are not shared")
		}
		if reflect.ValueOf(last.Labels).UnsafePointer() != reflect.ValueOf(decoded[3].Labels).UnsafePointer() {
			t.Error("equal labels are not shared")
		}
		t.Logf("strip=%v: %+v", strip, in.Stats())
	}
}

// TestSharedPartsOtherKinds: a kind without parts of its own (a Service)
// shares its metadata's parts and decodes equal to the plain decoding.
func TestSharedPartsOtherKinds(t *testing.T) {
	ref, got, _ := sharedDecoders[*corev1.Service](t, false)
	var prev *corev1.Service
	for i := range 4 {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("svc-", i), Labels: map[string]string{"app": "shop"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "X", Name: "x", UID: "1"}}},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "shop"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
		}
		msg, err := svc.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		want, err := ref.message(bytes.Clone(msg), nil)
		if err != nil {
			t.Fatal(err)
		}
		svc, err = got.message(bytes.Clone(msg), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(svc, want) {
			t.Fatalf("service %d: (-want +got):\n%s", i, cmp.Diff(want, svc))
		}
		if i >= 2 && unsafe.SliceData(svc.OwnerReferences) != unsafe.SliceData(prev.OwnerReferences) {
			t.Errorf("service %d: owner references not shared", i)
		}
		prev = svc
	}
}

// TestEachPartRepeatedField: a picked field in two runs (merged by the
// generated decoder) is refused, so that the caller decodes in full.
func TestEachPartRepeatedField(t *testing.T) {
	f := func(num protowire.Number, v string) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), []byte(v))
	}
	msg := bytes.Join([][]byte{f(7, "a"), f(7, "b"), f(1, "x"), f(7, "c")}, nil)
	var runs []string
	err := eachPart(msg, fields(7).has, func([]byte) error { return nil }, func(_ protowire.Number, run []byte) error {
		runs = append(runs, string(run))
		return nil
	})
	if err != errUnsplittable || len(runs) != 1 || runs[0] != string(msg[:6]) {
		t.Fatalf("err %v, runs %q: want the first run of two entries, then errUnsplittable", err, runs)
	}
}

// TestSharedPartsConfigMapsJSON: the same as TestSharedPartsConfigMaps for
// JSON (the data cut from the object before the typed decoder).
func TestSharedPartsConfigMapsJSON(t *testing.T) {
	ref, got, _ := sharedDecoders[*corev1.ConfigMap](t, true)
	var decoded []*corev1.ConfigMap
	for i := range 7 {
		cm := testConfigMap(i)
		if i >= 4 {
			cm.Data = map[string]string{"ca.crt": cm.Data["ca.crt"]}
		}
		cm.Data["escaped"] = "tab\there \"quoted\" ünïcødé"
		obj, err := json.Marshal(cm)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ref.jsonItem(bytes.Clone(obj))
		if err != nil {
			t.Fatal(err)
		}
		want.ManagedFields = nil
		got, err := got.jsonItem(append([]byte("  "), append(bytes.Clone(obj), "\n"...)...))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("configmap %d: (-want +got):\n%s", i, cmp.Diff(want, got))
		}
		decoded = append(decoded, got)
	}
	if unsafe.StringData(decoded[2].Data["logging.yaml"]) != unsafe.StringData(decoded[3].Data["logging.yaml"]) {
		t.Error("a long value that repeats is not shared")
	}
	if reflect.ValueOf(decoded[6].Data).UnsafePointer() != reflect.ValueOf(decoded[5].Data).UnsafePointer() {
		t.Error("equal data maps are not shared")
	}
}

// TestSharedPartsPodsOwnScalars: what a pod of a real cluster holds of its
// own besides its identity. With ShareRepeated, pods whose service-account
// token volume is their own (kube-api-access-<random>, in protobuf and in
// JSON) still share each other volume's source, and the pointers to small
// values every pod holds one of (priority, preemption policy, started,
// recursiveReadOnly, ...) and, in JSON too, their owner references; the
// conditions are held at their length, and
// the pod IP given twice is one string. Every pod equals the plain
// decoding.
func TestSharedPartsPodsOwnScalars(t *testing.T) {
	pods := corpusPods(6, 3)
	for i, p := range pods {
		token := fmt.Sprintf("kube-api-access-%05d", i)
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: token, VolumeSource: corev1.VolumeSource{
			Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Path: "token", ExpirationSeconds: ptr.To(int64(3607))}}}, DefaultMode: ptr.To(int32(420))}}})
		p.OwnerReferences = pods[0].OwnerReferences // one ReplicaSet's
		p.Spec.Priority, p.Spec.EnableServiceLinks = ptr.To(int32(0)), ptr.To(true)
		p.Spec.PreemptionPolicy = ptr.To(corev1.PreemptLowerPriority)
		p.Status.PodIPs = []corev1.PodIP{{IP: p.Status.PodIP}}
		for _, ty := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady} {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: ty, Status: corev1.ConditionTrue,
				LastTransitionTime: p.CreationTimestamp})
		}
		for j := range p.Spec.Containers {
			p.Spec.Containers[j].VolumeMounts = append(p.Spec.Containers[j].VolumeMounts, corev1.VolumeMount{Name: token,
				MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true})
		}
		for j := range p.Status.ContainerStatuses {
			p.Status.ContainerStatuses[j].VolumeMounts = []corev1.VolumeMountStatus{{Name: token,
				MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true,
				RecursiveReadOnly: ptr.To(corev1.RecursiveReadOnlyDisabled)}}
		}
	}
	// own lists the pointers of a pod that the test expects shared.
	own := func(p *corev1.Pod) map[string]unsafe.Pointer {
		cs := &p.Status.ContainerStatuses[0]
		return map[string]unsafe.Pointer{
			"metadata.ownerReferences": unsafe.Pointer(unsafe.SliceData(p.OwnerReferences)),
			"spec.priority":            unsafe.Pointer(p.Spec.Priority), "spec.enableServiceLinks": unsafe.Pointer(p.Spec.EnableServiceLinks),
			"spec.preemptionPolicy":                                  unsafe.Pointer(p.Spec.PreemptionPolicy),
			"spec.terminationGracePeriodSeconds":                     unsafe.Pointer(p.Spec.TerminationGracePeriodSeconds),
			"spec.volumes[1] (every pod's)":                          unsafe.Pointer(p.Spec.Volumes[1].Projected),
			"spec.volumes[2] (the pod's token)":                      unsafe.Pointer(p.Spec.Volumes[2].Projected),
			"containerStatuses[0].started":                           unsafe.Pointer(cs.Started),
			"containerStatuses[0].volumeMounts[0].recursiveReadOnly": unsafe.Pointer(cs.VolumeMounts[0].RecursiveReadOnly),
		}
	}
	for _, enc := range []string{"protobuf", "json"} {
		t.Run(enc, func(t *testing.T) {
			ref, got, _ := sharedDecoders[*corev1.Pod](t, false)
			decode := func(d *objectDecoder[*corev1.Pod], p *corev1.Pod) *corev1.Pod {
				var b []byte
				var err error
				if enc == "json" {
					b, err = json.Marshal(p)
				} else {
					b, err = p.Marshal()
				}
				if err != nil {
					t.Fatal(err)
				}
				var o *corev1.Pod
				if enc == "json" {
					o, err = d.jsonItem(b)
				} else {
					o, err = d.message(b, nil)
				}
				if err != nil {
					t.Fatal(err)
				}
				return o
			}
			var first map[string]unsafe.Pointer
			for i, p := range pods {
				o := decode(got, p)
				if want := decode(ref, p); !reflect.DeepEqual(o, want) {
					t.Fatalf("pod %d differs from the plain decoding:\n%s", i, cmp.Diff(want, o))
				}
				if c := o.Status.Conditions; cap(c) != len(c) {
					t.Errorf("pod %d: %d conditions held in room for %d", i, len(c), cap(c))
				}
				if unsafe.StringData(o.Status.PodIPs[0].IP) != unsafe.StringData(o.Status.PodIP) {
					t.Errorf("pod %d: its IP is held twice", i)
				}
				ptrs := own(o)
				switch i {
				case 0: // seen once: kept from the second sighting on
				case 1:
					first = ptrs
				default:
					for what, p := range ptrs {
						if p != first[what] {
							t.Errorf("pod %d: %s is its own, not pod 1's", i, what)
						}
					}
				}
			}
		})
	}
}
