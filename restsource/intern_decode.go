package restsource

import (
	"bytes"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Decoding protobuf with Options.ShareRepeated: the parts of an object
// that repeat across objects (the metadata's labels, annotations and owner
// references; a ConfigMap's data; for pods what the pods of a template
// have in common: a container's env, ports, probes, resources and
// security context, the pod's affinity, tolerations and volume sources, a
// container status's resources) are looked up in the Interner's table of
// parts by their encoding, and a hit takes the shared decoded part
// without decoding it. Everything else is decoded by the generated code,
// in runs of fields, and interned as the walkers in intern_objects.go
// would. The result equals the plain decoding's (the differential tests
// check it); its shared parts must not be modified.

// Sites of the parts.
const (
	siteLabels partSite = iota + 1
	siteAnnotations
	siteOwnerRefs
	siteVolumes
	siteVolumeSource
	siteContainers
	siteInitContainers
	siteContainerBut
	siteCommand
	siteArgs
	sitePorts
	siteEnvFrom
	siteEnv
	siteResources
	siteMounts
	siteLivenessProbe
	siteReadinessProbe
	siteStartupProbe
	siteLifecycle
	siteSecurityContext
	siteResizePolicy
	sitePodSecurity
	siteAffinity
	siteTolerations
	siteNodeSelector
	siteImagePullSecrets
	siteTopologySpread
	siteDNSConfig
	siteReadinessGates
	siteStatusAllocated
	siteStatusResources
	siteStatusUser
	siteStatusMounts
	siteData
	siteDataValue
	siteBinaryData
)

// eachPart splits msg into its fields, in order: each maximal run of
// consecutive length-delimited fields with one number that pick picks goes
// to part (its number and its bytes, tags included), the runs of other
// fields in between to other. A picked number in two runs (never written
// so by a Kubernetes server) makes it stop with errUnsplittable: a shared
// part replaces, where decoding twice would merge.
func eachPart(msg []byte, pick func(protowire.Number) bool, other func([]byte) error, part func(protowire.Number, []byte) error) error {
	var seen uint64
	start := 0 // of the current run of other fields
	for i := 0; i < len(msg); {
		num, typ, n := protowire.ConsumeTag(msg[i:])
		if n < 0 {
			return errUnsplittable
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[i+n:])
		if m < 0 {
			return errUnsplittable
		}
		if typ != protowire.BytesType || num >= 64 || !pick(num) {
			i += n + m
			continue
		}
		j := i + n + m
		for j < len(msg) {
			num2, typ2, n2 := protowire.ConsumeTag(msg[j:])
			if n2 < 0 || num2 != num || typ2 != protowire.BytesType {
				break
			}
			m2 := protowire.ConsumeFieldValue(num2, typ2, msg[j+n2:])
			if m2 < 0 {
				return errUnsplittable
			}
			j += n2 + m2
		}
		if seen&(1<<num) != 0 {
			return errUnsplittable
		}
		seen |= 1 << num
		if start < i {
			if err := other(msg[start:i]); err != nil {
				return err
			}
		}
		if err := part(num, msg[i:j]); err != nil {
			return err
		}
		i, start = j, j
	}
	if start < len(msg) {
		return other(msg[start:])
	}
	return nil
}

// fieldSet is a set of field numbers below 64, for eachPart's pick.
type fieldSet uint64

func fields(nums ...protowire.Number) fieldSet {
	var s fieldSet
	for _, n := range nums {
		s |= 1 << n
	}
	return s
}

func (s fieldSet) has(n protowire.Number) bool { return s&(1<<n) != 0 }

// partsDecoder is one object's decoding with shared parts.
type partsDecoder struct {
	in      *interning
	t       *partTable
	volumes []string // the pod's volume names, for its mounts
	// own holds the names of the pod's volumes that no object had before
	// (a service-account token volume's kube-api-access-<random>): the
	// runs that name them are the pod's own, not worth a lookup.
	own [][]byte
}

// part decodes the run of a field of parent type P with P's generated
// decoder, then takes the field: shared by every pod whose run is encoded
// alike. prepare interns the new part's strings before it is shared. A
// run of volume mounts naming one of the pod's own volumes (see
// partsDecoder.own) is decoded without the table: no other pod has it.
func part[P any, PP interface {
	*P
	unmarshaler
}, F any](d *partsDecoder, site partSite, run []byte, get func(*P) F, prepare func(F)) (F, error) {
	decode := func(run []byte) (F, error) {
		var p P
		if err := PP(&p).Unmarshal(run); err != nil {
			var zero F
			return zero, err
		}
		f := get(&p)
		prepare(f)
		return f, nil
	}
	if (site == siteMounts || site == siteStatusMounts) && d.mine(run) {
		return decode(run)
	}
	return sharePart(d.t, site, run, decode)
}

// mine reports whether run holds the name of one of the pod's own
// volumes.
func (d *partsDecoder) mine(run []byte) bool {
	for _, name := range d.own {
		if bytes.Contains(run, name) {
			return true
		}
	}
	return false
}

var (
	configMapParts     = fields(protoMetadataField, 2, 3)
	podMessageParts    = fields(protoMetadataField, 2, 3)
	objectMetaParts    = fields(metaLabels, metaAnnotations, 13)
	podSpecParts       = fields(1, 2, 7, 14, 15, 18, 20, 22, 26, 28, 33)
	volumeParts        = fields(2)
	containerParts     = fields(3, 4, 6, 7, 8, 9, 10, 11, 12, 15, 19, 22, 23)
	podStatusParts     = fields(8, 10, 13)
	containerStatParts = fields(10, 11, 12, 13)
)

// unmarshalParts decodes msg, the protobuf message of obj (whose
// ObjectMeta is om), with shared parts (and managedFields left out if
// strip); it reports whether it interned the whole object (pods and
// ConfigMaps), or only the metadata. On an error obj is left partly
// decoded, and the caller decodes it in full.
func unmarshalParts(msg []byte, obj unmarshaler, om *metav1.ObjectMeta, strip bool, in *interning) (whole bool, err error) {
	d := &partsDecoder{in: in, t: &in.Interner.parts}
	switch o := obj.(type) {
	case *corev1.Pod:
		return true, d.pod(msg, o, strip)
	case *corev1.ConfigMap:
		return true, d.configMap(msg, o, strip)
	}
	return false, eachRun(msg, protoMetadataField, obj.Unmarshal, func(meta []byte) error {
		return d.objectMeta(meta, om, strip)
	})
}

func (d *partsDecoder) pod(msg []byte, p *corev1.Pod, strip bool) error {
	return eachPart(msg, podMessageParts.has, p.Unmarshal, func(num protowire.Number, run []byte) error {
		v, err := single(num, run)
		if err != nil {
			return err
		}
		switch num {
		case protoMetadataField:
			return d.objectMeta(v, &p.ObjectMeta, strip)
		case 2:
			return d.spec(v, &p.Spec)
		default:
			return d.status(v, &p.Status)
		}
	})
}

// countEntries counts the fields of a run (which eachPart checked).
func countEntries(run []byte) int {
	n := 0
	for i := 0; i < len(run); n++ {
		num, typ, t := protowire.ConsumeTag(run[i:])
		if t < 0 {
			break
		}
		m := protowire.ConsumeFieldValue(num, typ, run[i+t:])
		if m < 0 {
			break
		}
		i += t + m
	}
	return n
}

// single returns the value of a run of one field, or errUnsplittable for
// a run of more (a message given twice, which decoding merges).
func single(num protowire.Number, run []byte) ([]byte, error) {
	n := protowire.SizeTag(num)
	v, m := protowire.ConsumeBytes(run[n:])
	if m < 0 || n+m != len(run) {
		return nil, errUnsplittable
	}
	return v, nil
}

// objectMeta decodes an ObjectMeta as decodeObjectMeta does, sharing its
// labels, annotations and owner references.
func (d *partsDecoder) objectMeta(meta []byte, om *metav1.ObjectMeta, strip bool) error {
	err := eachPart(meta, objectMetaParts.has, func(rest []byte) error {
		return decodeObjectMeta(rest, om, strip, d.in)
	}, func(num protowire.Number, run []byte) (err error) {
		switch num {
		case metaLabels:
			om.Labels, err = sharePart(d.t, siteLabels, run, d.stringMap)
		case metaAnnotations:
			om.Annotations, err = sharePart(d.t, siteAnnotations, run, d.stringMap)
		default:
			om.OwnerReferences, err = part(d, siteOwnerRefs, run, func(m *metav1.ObjectMeta) []metav1.OwnerReference {
				return slices.Clip(m.OwnerReferences)
			}, d.in.ownerRefs)
		}
		return err
	})
	if err != nil {
		return err
	}
	d.in.managedFields(om.ManagedFields)
	return nil
}

// stringMap decodes a run of map<string, string> entries, interned.
func (d *partsDecoder) stringMap(run []byte) (map[string]string, error) {
	m := map[string]string{}
	for i := 0; i < len(run); {
		_, _, n := protowire.ConsumeTag(run[i:])
		v, l := protowire.ConsumeBytes(run[i+n:])
		if n < 0 || l < 0 {
			return nil, errUnsplittable
		}
		k, val, err := stringMapEntry(run[i+n+l-len(v):], len(v), d.in)
		if err != nil {
			return nil, err
		}
		m[k] = val
		i += n + l
	}
	return m, nil
}

func (d *partsDecoder) spec(msg []byte, s *corev1.PodSpec) error {
	err := eachPart(msg, podSpecParts.has, s.Unmarshal, func(num protowire.Number, run []byte) (err error) {
		switch num {
		case 1:
			s.Volumes, err = d.volumesOf(run)
		case 2:
			s.Containers, err = d.containersOf(siteContainers, run)
		case 20:
			s.InitContainers, err = d.containersOf(siteInitContainers, run)
		case 7:
			s.NodeSelector, err = sharePart(d.t, siteNodeSelector, run, d.stringMap)
		case 14:
			s.SecurityContext, err = part(d, sitePodSecurity, run, func(s *corev1.PodSpec) *corev1.PodSecurityContext { return s.SecurityContext }, d.in.podSecurity)
		case 15:
			s.ImagePullSecrets, err = part(d, siteImagePullSecrets, run, func(s *corev1.PodSpec) []corev1.LocalObjectReference { return slices.Clip(s.ImagePullSecrets) }, d.in.localRefs)
		case 18:
			s.Affinity, err = part(d, siteAffinity, run, func(s *corev1.PodSpec) *corev1.Affinity { return s.Affinity }, d.in.affinity)
		case 22:
			s.Tolerations, err = part(d, siteTolerations, run, func(s *corev1.PodSpec) []corev1.Toleration { return slices.Clip(s.Tolerations) }, d.in.tolerations)
		case 26:
			s.DNSConfig, err = part(d, siteDNSConfig, run, func(s *corev1.PodSpec) *corev1.PodDNSConfig { return s.DNSConfig }, func(*corev1.PodDNSConfig) {})
		case 28:
			s.ReadinessGates, err = part(d, siteReadinessGates, run, func(s *corev1.PodSpec) []corev1.PodReadinessGate { return slices.Clip(s.ReadinessGates) }, func([]corev1.PodReadinessGate) {})
		default: // 33
			s.TopologySpreadConstraints, err = part(d, siteTopologySpread, run, func(s *corev1.PodSpec) []corev1.TopologySpreadConstraint {
				return slices.Clip(s.TopologySpreadConstraints)
			}, d.in.topologySpread)
		}
		return err
	})
	if err != nil {
		return err
	}
	s.Overhead = d.in.resourceList(s.Overhead)
	d.in.podSpecScalars(s)
	return nil
}

// volumesOf decodes a run of volumes: all of them shared if another pod's
// are encoded alike, else each volume's source shared, its name the pod's
// (and noted in own if no object had it before: the run is then not
// offered to the table).
func (d *partsDecoder) volumesOf(run []byte) ([]corev1.Volume, error) {
	d.own = d.own[:0]
	vols, err := sharePartKeep(d.t, siteVolumes, partKey{a: run}, func() ([]corev1.Volume, error) {
		vols := make([]corev1.Volume, 0, countEntries(run))
		for i := 0; i < len(run); {
			_, _, n := protowire.ConsumeTag(run[i:])
			v, l := protowire.ConsumeBytes(run[i+n:])
			if n < 0 || l < 0 {
				return nil, errUnsplittable
			}
			var vol corev1.Volume
			err := eachPart(v, volumeParts.has, vol.Unmarshal, func(num protowire.Number, run []byte) (err error) {
				vol.VolumeSource, err = part(d, siteVolumeSource, run, func(v *corev1.Volume) corev1.VolumeSource { return v.VolumeSource }, d.in.volumeSource)
				return err
			})
			if err != nil {
				return nil, err
			}
			var hit bool
			vol.Name, hit = d.in.internHit(vol.Name)
			if !hit && vol.Name != "" {
				d.own = append(d.own, []byte(vol.Name))
			}
			vols = append(vols, vol)
			i += n + l
		}
		return slices.Clip(vols), nil
	}, func() bool { return len(d.own) == 0 })
	if err != nil {
		return nil, err
	}
	d.volumes = d.volumes[:0]
	for i := range vols {
		d.volumes = append(d.volumes, vols[i].Name)
	}
	return vols, nil
}

// containersOf decodes a run of containers: all shared if another pod's
// are encoded alike, else each container shared but for its volume
// mounts (which name the pod's own service-account token volume), else
// each with its parts shared.
func (d *partsDecoder) containersOf(site partSite, run []byte) ([]corev1.Container, error) {
	decode := func(run []byte) ([]corev1.Container, error) {
		cs := make([]corev1.Container, 0, countEntries(run))
		for i := 0; i < len(run); {
			_, _, n := protowire.ConsumeTag(run[i:])
			v, l := protowire.ConsumeBytes(run[i+n:])
			if n < 0 || l < 0 {
				return nil, errUnsplittable
			}
			cs = append(cs, corev1.Container{})
			if err := d.containerBut(v, &cs[len(cs)-1]); err != nil {
				return nil, err
			}
			i += n + l
		}
		return cs, nil
	}
	if d.mine(run) {
		return decode(run)
	}
	return sharePart(d.t, site, run, decode)
}

// containerBut decodes the container msg into c: the container but for
// its volume mounts shared with every container encoded alike, the mounts
// after.
func (d *partsDecoder) containerBut(msg []byte, c *corev1.Container) error {
	from, to, ok := runSpan(msg, 9)
	if !ok {
		return d.container(msg, c)
	}
	shared, err := sharePartKey(d.t, siteContainerBut, partKey{a: msg[:from], b: msg[to:]}, func() (corev1.Container, error) {
		var c corev1.Container
		err := d.container(append(msg[:from:from], msg[to:]...), &c)
		return c, err
	})
	if err != nil {
		return err
	}
	*c = shared
	if from == to {
		return nil
	}
	c.VolumeMounts, err = part(d, siteMounts, msg[from:to], func(c *corev1.Container) []corev1.VolumeMount { return slices.Clip(c.VolumeMounts) }, func(ms []corev1.VolumeMount) {
		d.in.mounts(ms, d.volumes)
	})
	return err
}

// runSpan returns the span of the run of length-delimited fields num in
// msg (from == to at the end of msg if there is none); ok is false if msg
// does not split into fields or has fields num outside that one run.
func runSpan(msg []byte, num protowire.Number) (from, to int, ok bool) {
	from, to = -1, -1
	for i := 0; i < len(msg); {
		n, typ, t := protowire.ConsumeTag(msg[i:])
		if t < 0 {
			return 0, 0, false
		}
		m := protowire.ConsumeFieldValue(n, typ, msg[i+t:])
		if m < 0 {
			return 0, 0, false
		}
		if n == num {
			switch {
			case typ != protowire.BytesType || to >= 0 && to != i:
				return 0, 0, false
			case from < 0:
				from = i
			}
			to = i + t + m
		}
		i += t + m
	}
	if from < 0 {
		return len(msg), len(msg), true
	}
	return from, to, true
}

func (d *partsDecoder) container(msg []byte, c *corev1.Container) error {
	in := d.in
	err := eachPart(msg, containerParts.has, c.Unmarshal, func(num protowire.Number, run []byte) (err error) {
		switch num {
		case 3:
			c.Command, err = part(d, siteCommand, run, func(c *corev1.Container) []string { return slices.Clip(c.Command) }, in.all)
		case 4:
			c.Args, err = part(d, siteArgs, run, func(c *corev1.Container) []string { return slices.Clip(c.Args) }, in.all)
		case 6:
			c.Ports, err = part(d, sitePorts, run, func(c *corev1.Container) []corev1.ContainerPort { return slices.Clip(c.Ports) }, in.ports)
		case 7:
			c.Env, err = part(d, siteEnv, run, func(c *corev1.Container) []corev1.EnvVar { return slices.Clip(c.Env) }, in.envVars)
		case 8:
			c.Resources, err = part(d, siteResources, run, func(c *corev1.Container) corev1.ResourceRequirements {
				return corev1.ResourceRequirements{Limits: c.Resources.Limits, Requests: c.Resources.Requests, Claims: slices.Clip(c.Resources.Claims)}
			}, func(r corev1.ResourceRequirements) { in.resourceNamesOf(r) })
		case 9:
			c.VolumeMounts, err = part(d, siteMounts, run, func(c *corev1.Container) []corev1.VolumeMount { return slices.Clip(c.VolumeMounts) }, func(ms []corev1.VolumeMount) {
				in.mounts(ms, d.volumes)
			})
		case 10:
			c.LivenessProbe, err = part(d, siteLivenessProbe, run, func(c *corev1.Container) *corev1.Probe { return c.LivenessProbe }, in.probe)
		case 11:
			c.ReadinessProbe, err = part(d, siteReadinessProbe, run, func(c *corev1.Container) *corev1.Probe { return c.ReadinessProbe }, in.probe)
		case 22:
			c.StartupProbe, err = part(d, siteStartupProbe, run, func(c *corev1.Container) *corev1.Probe { return c.StartupProbe }, in.probe)
		case 12:
			c.Lifecycle, err = part(d, siteLifecycle, run, func(c *corev1.Container) *corev1.Lifecycle { return c.Lifecycle }, func(*corev1.Lifecycle) {})
		case 15:
			c.SecurityContext, err = part(d, siteSecurityContext, run, func(c *corev1.Container) *corev1.SecurityContext { return c.SecurityContext }, in.securityContext)
		case 19:
			c.EnvFrom, err = part(d, siteEnvFrom, run, func(c *corev1.Container) []corev1.EnvFromSource { return slices.Clip(c.EnvFrom) }, in.envFrom)
		default: // 23
			c.ResizePolicy, err = part(d, siteResizePolicy, run, func(c *corev1.Container) []corev1.ContainerResizePolicy { return slices.Clip(c.ResizePolicy) }, func([]corev1.ContainerResizePolicy) {})
		}
		return err
	})
	if err != nil {
		return err
	}
	in.containerScalars(c)
	return nil
}

func (d *partsDecoder) status(msg []byte, s *corev1.PodStatus) error {
	err := eachPart(msg, podStatusParts.has, s.Unmarshal, func(num protowire.Number, run []byte) error {
		cs := make([]corev1.ContainerStatus, 0, countEntries(run))
		for i := 0; i < len(run); {
			_, _, n := protowire.ConsumeTag(run[i:])
			v, l := protowire.ConsumeBytes(run[i+n:])
			if n < 0 || l < 0 {
				return errUnsplittable
			}
			cs = append(cs, corev1.ContainerStatus{})
			if err := d.containerStatus(v, &cs[len(cs)-1]); err != nil {
				return err
			}
			i += n + l
		}
		switch num {
		case 8:
			s.ContainerStatuses = cs
		case 10:
			s.InitContainerStatuses = cs
		default: // 13
			s.EphemeralContainerStatuses = cs
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.AllocatedResources = d.in.resourceList(s.AllocatedResources)
	d.in.resources(s.Resources)
	d.in.podStatusScalars(s)
	return nil
}

func (d *partsDecoder) containerStatus(msg []byte, c *corev1.ContainerStatus) error {
	in := d.in
	err := eachPart(msg, containerStatParts.has, c.Unmarshal, func(num protowire.Number, run []byte) (err error) {
		switch num {
		case 10:
			c.AllocatedResources, err = part(d, siteStatusAllocated, run, func(c *corev1.ContainerStatus) corev1.ResourceList { return c.AllocatedResources }, func(l corev1.ResourceList) {
				in.resourceNames(l)
			})
		case 11:
			c.Resources, err = part(d, siteStatusResources, run, func(c *corev1.ContainerStatus) *corev1.ResourceRequirements { return c.Resources }, func(r *corev1.ResourceRequirements) {
				in.resourceNamesOf(*r)
			})
		case 12:
			c.VolumeMounts, err = part(d, siteStatusMounts, run, func(c *corev1.ContainerStatus) []corev1.VolumeMountStatus { return slices.Clip(c.VolumeMounts) }, func(ms []corev1.VolumeMountStatus) {
				for i := range ms {
					in.volumeName(&ms[i].Name, d.volumes)
					in.intern(&ms[i].MountPath)
				}
			})
		default: // 13
			c.User, err = part(d, siteStatusUser, run, func(c *corev1.ContainerStatus) *corev1.ContainerUser { return c.User }, func(*corev1.ContainerUser) {})
		}
		return err
	})
	if err != nil {
		return err
	}
	in.containerStatusScalars(c)
	return nil
}

// configMap decodes a ConfigMap: its data (and binaryData) maps shared
// whole, and on a miss each value too long to intern shared by itself (a
// CA bundle or a chart's configuration file in many namespaces).
func (d *partsDecoder) configMap(msg []byte, cm *corev1.ConfigMap, strip bool) error {
	return eachPart(msg, configMapParts.has, cm.Unmarshal, func(num protowire.Number, run []byte) (err error) {
		switch num {
		case protoMetadataField:
			v, err := single(num, run)
			if err != nil {
				return err
			}
			return d.objectMeta(v, &cm.ObjectMeta, strip)
		case 2:
			cm.Data, err = sharePart(d.t, siteData, run, d.dataMap)
		default: // 3
			cm.BinaryData, err = part(d, siteBinaryData, run, func(cm *corev1.ConfigMap) map[string][]byte { return cm.BinaryData }, func(m map[string][]byte) {
				for k, v := range m {
					m[d.in.String(k)] = v
				}
			})
		}
		return err
	})
}

// dataMap decodes a run of map<string, string> entries: keys and short
// values interned, long values shared entry by entry.
func (d *partsDecoder) dataMap(run []byte) (map[string]string, error) {
	m := map[string]string{}
	for i := 0; i < len(run); {
		_, _, n := protowire.ConsumeTag(run[i:])
		v, l := protowire.ConsumeBytes(run[i+n:])
		if n < 0 || l < 0 {
			return nil, errUnsplittable
		}
		if len(v) <= MaxInternedLen+8 {
			k, val, err := stringMapEntry(run[i+n+l-len(v):], len(v), d.in)
			if err != nil {
				return nil, err
			}
			m[k] = val
		} else {
			kv, err := sharePart(d.t, siteDataValue, run[i:i+n+l], func(entry []byte) ([2]string, error) {
				var cm corev1.ConfigMap
				if err := cm.Unmarshal(entry); err != nil {
					return [2]string{}, err
				}
				for k, v := range cm.Data {
					return [2]string{d.in.String(k), v}, nil
				}
				return [2]string{}, errUnsplittable
			})
			if err != nil {
				return nil, err
			}
			m[kv[0]] = kv[1]
		}
		i += n + l
	}
	return m, nil
}
