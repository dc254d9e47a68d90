package restsource

import (
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The declarations of what Options.ShareRepeated shares (parts.go): one
// message per Go type that holds parts, each field a part by protobuf
// number and JSON name. A field is shared whole (shared, sharedSlice,
// sharedMounts), decoded by functions of its own (custom: a list whose
// elements are messages of their own, a map whose long values are shared
// one by one), or a message of its own (nested).

// partKinds are the kinds whose objects are decoded in parts, whole.
var partKinds = map[reflect.Type]*kindParts{}

func init() {
	addKind(podParts)
	addKind(configMapParts)
}

// objectMetaParts: every kind's metadata. Its JSON is cut by
// cutMetadataStrings (json_meta.go), not here.
var objectMetaParts = func() *message[metav1.ObjectMeta, *metav1.ObjectMeta] {
	m := newMessage(func(in *interning, om *metav1.ObjectMeta) { in.managedFields(om.ManagedFields) },
		custom(metaLabels, "", func(om *metav1.ObjectMeta) *map[string]string { return &om.Labels }, sharedStringMap, nil),
		custom(metaAnnotations, "", func(om *metav1.ObjectMeta) *map[string]string { return &om.Annotations }, sharedStringMap, nil),
		sharedSlice(13, "", func(om *metav1.ObjectMeta) *[]metav1.OwnerReference { return &om.OwnerReferences }, interned((*interning).ownerRefs)))
	m.other = func(d *partsDecoder, run []byte, om *metav1.ObjectMeta) error {
		return decodeObjectMeta(run, om, d.strip, d.in)
	}
	return m
}()

var podParts = newMessage(nil,
	nested(protoMetadataField, "", func(p *corev1.Pod) *metav1.ObjectMeta { return &p.ObjectMeta }, objectMetaParts),
	nested(2, "spec", func(p *corev1.Pod) *corev1.PodSpec { return &p.Spec }, podSpecParts),
	nested(3, "status", func(p *corev1.Pod) *corev1.PodStatus { return &p.Status }, podStatusParts))

var podSpecParts = newMessage(func(in *interning, s *corev1.PodSpec) {
	s.Overhead = in.resourceList(s.Overhead)
	in.podSpecScalars(s)
},
	custom(1, "volumes", func(s *corev1.PodSpec) *[]corev1.Volume { return &s.Volumes }, (*partsDecoder).volumesOf, (*partsDecoder).volumesJSON),
	custom(2, "containers", func(s *corev1.PodSpec) *[]corev1.Container { return &s.Containers }, (*partsDecoder).containersOf, (*partsDecoder).containersJSON),
	custom(7, "nodeSelector", func(s *corev1.PodSpec) *map[string]string { return &s.NodeSelector }, sharedStringMap, sharedStringMapJSON),
	shared(14, "securityContext", func(s *corev1.PodSpec) **corev1.PodSecurityContext { return &s.SecurityContext }, interned((*interning).podSecurity)),
	sharedSlice(15, "imagePullSecrets", func(s *corev1.PodSpec) *[]corev1.LocalObjectReference { return &s.ImagePullSecrets }, interned((*interning).localRefs)),
	shared(18, "affinity", func(s *corev1.PodSpec) **corev1.Affinity { return &s.Affinity }, interned((*interning).affinity)),
	custom(20, "initContainers", func(s *corev1.PodSpec) *[]corev1.Container { return &s.InitContainers }, (*partsDecoder).containersOf, (*partsDecoder).containersJSON),
	sharedSlice(22, "tolerations", func(s *corev1.PodSpec) *[]corev1.Toleration { return &s.Tolerations }, interned((*interning).tolerations)),
	shared(26, "dnsConfig", func(s *corev1.PodSpec) **corev1.PodDNSConfig { return &s.DNSConfig }, nil),
	sharedSlice(28, "readinessGates", func(s *corev1.PodSpec) *[]corev1.PodReadinessGate { return &s.ReadinessGates }, nil),
	sharedSlice(33, "topologySpreadConstraints", func(s *corev1.PodSpec) *[]corev1.TopologySpreadConstraint { return &s.TopologySpreadConstraints }, interned((*interning).topologySpread)))

// volumeParts: a volume's source (inline in JSON: a volume's JSON is
// shared whole, see volumesJSON).
var volumeParts = newMessage(nil,
	shared(2, "", func(v *corev1.Volume) *corev1.VolumeSource { return &v.VolumeSource }, interned((*interning).volumeSource)))

var containerParts = newMessage((*interning).containerScalars,
	sharedSlice(3, "command", func(c *corev1.Container) *[]string { return &c.Command }, interned((*interning).all)),
	sharedSlice(4, "args", func(c *corev1.Container) *[]string { return &c.Args }, interned((*interning).all)),
	sharedSlice(6, "ports", func(c *corev1.Container) *[]corev1.ContainerPort { return &c.Ports }, interned((*interning).ports)),
	sharedSlice(7, "env", func(c *corev1.Container) *[]corev1.EnvVar { return &c.Env }, interned((*interning).envVars)),
	shared(8, "resources", func(c *corev1.Container) *corev1.ResourceRequirements { return &c.Resources }, func(d *partsDecoder, r *corev1.ResourceRequirements) {
		r.Claims = slices.Clip(r.Claims)
		d.in.resourceNamesOf(*r)
	}),
	sharedMounts(9, "volumeMounts", func(c *corev1.Container) *[]corev1.VolumeMount { return &c.VolumeMounts }, func(d *partsDecoder, ms *[]corev1.VolumeMount) {
		d.in.mounts(*ms, d.volumes)
	}),
	shared(10, "livenessProbe", func(c *corev1.Container) **corev1.Probe { return &c.LivenessProbe }, interned((*interning).probe)),
	shared(11, "readinessProbe", func(c *corev1.Container) **corev1.Probe { return &c.ReadinessProbe }, interned((*interning).probe)),
	shared(12, "lifecycle", func(c *corev1.Container) **corev1.Lifecycle { return &c.Lifecycle }, nil),
	shared(15, "securityContext", func(c *corev1.Container) **corev1.SecurityContext { return &c.SecurityContext }, interned((*interning).securityContext)),
	sharedSlice(19, "envFrom", func(c *corev1.Container) *[]corev1.EnvFromSource { return &c.EnvFrom }, interned((*interning).envFrom)),
	shared(22, "startupProbe", func(c *corev1.Container) **corev1.Probe { return &c.StartupProbe }, interned((*interning).probe)),
	sharedSlice(23, "resizePolicy", func(c *corev1.Container) *[]corev1.ContainerResizePolicy { return &c.ResizePolicy }, nil))

var podStatusParts = newMessage(func(in *interning, s *corev1.PodStatus) {
	s.AllocatedResources = in.resourceList(s.AllocatedResources)
	in.resources(s.Resources)
	in.podStatusScalars(s)
},
	custom(8, "containerStatuses", func(s *corev1.PodStatus) *[]corev1.ContainerStatus { return &s.ContainerStatuses }, (*partsDecoder).statusesOf, (*partsDecoder).statusesJSON),
	custom(10, "initContainerStatuses", func(s *corev1.PodStatus) *[]corev1.ContainerStatus { return &s.InitContainerStatuses }, (*partsDecoder).statusesOf, (*partsDecoder).statusesJSON),
	custom(13, "ephemeralContainerStatuses", func(s *corev1.PodStatus) *[]corev1.ContainerStatus { return &s.EphemeralContainerStatuses }, (*partsDecoder).statusesOf, (*partsDecoder).statusesJSON))

var containerStatusParts = newMessage((*interning).containerStatusScalars,
	shared(10, "allocatedResources", func(c *corev1.ContainerStatus) *corev1.ResourceList { return &c.AllocatedResources }, interned((*interning).resourceNames)),
	shared(11, "resources", func(c *corev1.ContainerStatus) **corev1.ResourceRequirements { return &c.Resources }, func(d *partsDecoder, r **corev1.ResourceRequirements) {
		d.in.resourceNamesOf(**r)
	}),
	sharedMounts(12, "volumeMounts", func(c *corev1.ContainerStatus) *[]corev1.VolumeMountStatus { return &c.VolumeMounts }, func(d *partsDecoder, ms *[]corev1.VolumeMountStatus) {
		d.in.mountStatuses(*ms, d.volumes)
	}),
	shared(13, "user", func(c *corev1.ContainerStatus) **corev1.ContainerUser { return &c.User }, nil))

// configMapParts: a ConfigMap's data shared whole, and on a miss each
// value too long to intern shared by itself (a CA bundle or a chart's
// configuration file in many namespaces).
var configMapParts = newMessage(nil,
	nested(protoMetadataField, "", func(cm *corev1.ConfigMap) *metav1.ObjectMeta { return &cm.ObjectMeta }, objectMetaParts),
	custom(2, "data", func(cm *corev1.ConfigMap) *map[string]string { return &cm.Data }, (*partsDecoder).dataOf, (*partsDecoder).dataJSON),
	shared(3, "", func(cm *corev1.ConfigMap) *map[string][]byte { return &cm.BinaryData }, func(d *partsDecoder, m *map[string][]byte) {
		for k, v := range *m {
			(*m)[d.in.String(k)] = v
		}
	}))
