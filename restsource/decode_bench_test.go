package restsource

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	restwatch "k8s.io/client-go/rest/watch"
	"k8s.io/utils/ptr"
)

// cycle repeats one frame forever.
type cycle struct {
	frame []byte
	off   int
}

func (c *cycle) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], c.frame[c.off:])
		n += k
		c.off = (c.off + k) % len(c.frame)
	}
	return n, nil
}

func (c *cycle) Close() error { return nil }

// benchPod is a pod of typical size (about 3 KB in protobuf). It stays
// rather than objects.RealisticPod: docs/benchmarks/scenarios.md quotes
// BenchmarkDecodeFrame's per-frame times, which depend on this pod's shape.
func benchPod() *corev1.Pod {
	ts := metav1.Now()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-7d9f8c6b5-x2x9k", Namespace: "team-a", UID: "6c1f1e9a-0d4b-4b0e-9f2a-1a2b3c4d5e6f",
		ResourceVersion: "123456", CreationTimestamp: ts, GenerateName: "web-7d9f8c6b5-",
		Labels:          map[string]string{"app": "web", "pod-template-hash": "7d9f8c6b5", "tier": "frontend"},
		Annotations:     map[string]string{"kubernetes.io/psp": "restricted", "prometheus.io/scrape": "true"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f8c6b5", UID: "0d4b"}}},
		Spec: corev1.PodSpec{NodeName: "node-17", ServiceAccountName: "default", RestartPolicy: corev1.RestartPolicyAlways}}
	for i := range 2 {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: fmt.Sprint("c", i), Image: "registry.example/web:1.2.3",
			Ports: []corev1.ContainerPort{{ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Env:   []corev1.EnvVar{{Name: "MODE", Value: "prod"}, {Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"),
				corev1.ResourceMemory: resource.MustParse("128Mi")}},
			VolumeMounts: []corev1.VolumeMount{{Name: "token", MountPath: "/var/run/secrets", ReadOnly: true}}})
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: fmt.Sprint("c", i), Ready: true,
			Image: "registry.example/web:1.2.3", ImageID: "sha256:abcdef", ContainerID: "containerd://0123456789",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ts}}})
	}
	p.Spec.Volumes = []corev1.Volume{{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}}}
	p.Status.Phase, p.Status.PodIP, p.Status.HostIP = corev1.PodRunning, "10.1.2.3", "192.168.0.17"
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: ts},
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: ts}}
	return p
}

func benchFrame(b *testing.B, ct string) []byte {
	info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), ct)
	obj, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion), benchPod())
	if err != nil {
		b.Fatal(err)
	}
	ev, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.StreamSerializer.Serializer, schema.GroupVersion{Version: "v1"}),
		&metav1.WatchEvent{Type: string(watch.Modified), Object: runtime.RawExtension{Raw: obj}})
	if err != nil {
		b.Fatal(err)
	}
	if ct == ContentTypeProtobuf {
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(ev))), ev...)
	}
	return ev
}

// BenchmarkDecodeFrame: reading and decoding one watch frame (a typical
// pod) from a stream, restsource (on one goroutine) against the decoder
// client-go's clientset uses.
func BenchmarkDecodeFrame(b *testing.B) {
	for _, ct := range []string{ContentTypeProtobuf, ContentTypeJSON} {
		name := map[string]string{ContentTypeProtobuf: "protobuf", ContentTypeJSON: "json"}[ct]
		frame := benchFrame(b, ct)
		b.Run(name+"/restsource", func(b *testing.B) {
			dec, err := newTypedDecoder[*corev1.Pod](Options{Scheme: scheme.Scheme})
			if err != nil {
				b.Fatal(err)
			}
			var frames frameReader = &protoFrames{r: bufio.NewReaderSize(&cycle{frame: frame}, 64<<10)}
			if ct == ContentTypeJSON {
				frames = newJSONFrames(&cycle{frame: frame})
			}
			decode := newEventDecoder(dec, ct == ContentTypeJSON)
			var buf []byte
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				f, err := frames.next(buf)
				if err != nil {
					b.Fatal(err)
				}
				buf = f
				if ev, err := decode(f); err != nil || ev.Object.(*corev1.Pod).Name == "" {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/client-go", func(b *testing.B) {
			codecs := scheme.Codecs.WithoutConversion()
			info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), ct)
			objDec := codecs.DecoderToVersion(info.Serializer, corev1.SchemeGroupVersion)
			var r io.ReadCloser = &cycle{frame: frame}
			d := restwatch.NewDecoder(streaming.NewDecoder(info.StreamSerializer.Framer.NewFrameReader(r), info.StreamSerializer.Serializer), objDec)
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				_, obj, err := d.Decode()
				if err != nil || obj.(*corev1.Pod).Name == "" {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeShared: decoding list items with the recommended memory
// options (StripManagedFields, an Interner, ShareRepeated), corpus pods and
// ConfigMaps (and Deployments, interned by reflection), in both encodings:
// the parts decoding's own cost, per object.
func BenchmarkDecodeShared(b *testing.B) {
	pods := corpusPods(512, 7)
	cms := make([]*corev1.ConfigMap, 512)
	for i := range cms {
		cms[i] = testConfigMap(i % 64)
	}
	opts := func() Options {
		return Options{Scheme: scheme.Scheme, StripManagedFields: true, Interner: NewInterner(0), ShareRepeated: true}
	}
	b.Run("pods/protobuf", func(b *testing.B) { benchItems(b, opts(), pods, false) })
	b.Run("pods/json", func(b *testing.B) { benchItems(b, opts(), pods, true) })
	b.Run("configmaps/protobuf", func(b *testing.B) { benchItems(b, opts(), cms, false) })
	b.Run("configmaps/json", func(b *testing.B) { benchItems(b, opts(), cms, true) })
	deps := make([]*appsv1.Deployment, 512)
	for i, p := range pods {
		deps[i] = &appsv1.Deployment{ObjectMeta: p.ObjectMeta, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(i % 5)),
			Selector: &metav1.LabelSelector{MatchLabels: p.Labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: p.Labels}, Spec: p.Spec}}}
	}
	b.Run("deployments/protobuf", func(b *testing.B) { benchItems(b, opts(), deps, false) })
	b.Run("deployments/json", func(b *testing.B) { benchItems(b, opts(), deps, true) })
}

// benchItems decodes objs' encodings as list items, round and round.
func benchItems[T interface {
	*E
	runtime.Object
	Marshal() ([]byte, error)
}, E any](b *testing.B, opts Options, objs []T, asJSON bool) {
	dec, err := newTypedDecoder[T](opts)
	if err != nil {
		b.Fatal(err)
	}
	encs := make([][]byte, len(objs))
	for i, o := range objs {
		if asJSON {
			encs[i], err = json.Marshal(o)
		} else {
			encs[i], err = o.Marshal()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	var buf []byte
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		buf = append(buf[:0], encs[i%len(encs)]...)
		var err error
		if asJSON {
			_, err = dec.jsonItem(buf)
		} else {
			_, err = dec.message(buf, nil)
		}
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
}
