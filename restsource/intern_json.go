package restsource

import (
	"bytes"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"
)

// Decoding a pod's JSON with Options.ShareRepeated, as intern_decode.go
// does for protobuf: the members of the spec and status that hold shared
// parts are cut from the object before the typed decoder runs, each
// looked up in the Interner's table of parts by its bytes (a hit is not
// decoded at all), and the containers and container statuses decoded one
// by one with their own parts cut. Wherever the bytes are not plainly
// what the typed decoder would read the same way (a member twice, an
// escaped key, a value it would reject), nothing is cut and the pod is
// decoded whole, as without the option.

// jsonSite is the site of a part's JSON encoding: never equal to a
// protobuf one.
func jsonSite(s partSite) partSite { return s | 0x80 }

// podJSONParts holds the parts cut from a pod's JSON, to be set on the
// decoded pod.
type podJSONParts struct {
	spec      corev1.PodSpec   // the spec's cut members
	status    corev1.PodStatus // the status's cut members
	specSet   fieldSet         // which of spec's members were cut (by protobuf number)
	statusSet fieldSet
}

// Members cut from a pod's spec and status, by their protobuf numbers.
var (
	jsonSpecMembers = map[string]int{"volumes": 1, "containers": 2, "nodeSelector": 7, "securityContext": 14,
		"imagePullSecrets": 15, "affinity": 18, "initContainers": 20, "tolerations": 22, "dnsConfig": 26,
		"readinessGates": 28, "topologySpreadConstraints": 33}
	jsonStatusMembers    = map[string]int{"containerStatuses": 8, "initContainerStatuses": 10, "ephemeralContainerStatuses": 13}
	jsonContainerMembers = map[string]int{"command": 3, "args": 4, "ports": 6, "env": 7, "resources": 8,
		"volumeMounts": 9, "livenessProbe": 10, "readinessProbe": 11, "lifecycle": 12, "securityContext": 15,
		"envFrom": 19, "startupProbe": 22, "resizePolicy": 23}
	jsonContainerStatusMembers = map[string]int{"allocatedResources": 10, "resources": 11, "volumeMounts": 12, "user": 13}
)

// cutMembers finds the members of the JSON object obj named in pick
// (values other than null) and returns their numbers, their values'
// spans and the spans of the members to keep. ok is false if a key is
// escaped or a picked one given twice.
func cutMembers(obj []byte, pick map[string]int) (nums []int, vals, kept [][2]int, ok bool) {
	var seen fieldSet
	err := eachMemberAt(obj, func(key []byte, keyStart, valStart, valEnd int) error {
		if bytes.IndexByte(key, '\\') >= 0 {
			return errFound
		}
		num, picked := pick[string(key)]
		if !picked || string(obj[valStart:valEnd]) == "null" {
			kept = append(kept, [2]int{keyStart, valEnd})
			return nil
		}
		if seen.has(protowire.Number(num)) {
			return errFound
		}
		seen |= 1 << num
		nums, vals = append(nums, num), append(vals, [2]int{valStart, valEnd})
		return nil
	})
	return nums, vals, kept, err == nil
}

// keepMembers writes the object obj[start:end] with only the kept members
// (spans in obj, in order) to obj[start:], in place (writing never
// overtakes reading), moves the rest of obj after it, and returns the
// shortened obj.
func keepMembers(obj []byte, start, end int, kept [][2]int) []byte {
	w := start + 1
	for i, k := range kept {
		if i > 0 {
			obj[w] = ','
			w++
		}
		w += copy(obj[w:], obj[k[0]:k[1]])
	}
	obj[w] = '}'
	w++
	n := copy(obj[w:], obj[end:])
	return obj[:w+n]
}

// appendKept appends the object obj with only the kept members to dst.
func appendKept(dst, obj []byte, kept [][2]int) []byte {
	dst = append(dst, '{')
	for i, k := range kept {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, obj[k[0]:k[1]]...)
	}
	return append(dst, '}')
}

// jsonPart decodes the JSON value v into a new F, shared by every pod
// whose value is encoded alike; prepare interns a new part's strings.
func jsonPart[F any](d *partsDecoder, site partSite, v []byte, clip func(F) F, prepare func(F)) (F, error) {
	return sharePart(d.t, jsonSite(site), v, func(v []byte) (F, error) {
		var f F
		if err := kjson.UnmarshalCaseSensitivePreserveInts(v, &f); err != nil {
			return f, err
		}
		if clip != nil {
			f = clip(f)
		}
		prepare(f)
		return f, nil
	})
}

func clipped[E any](s []E) []E { return slices.Clip(s) }

// cutPodJSON cuts the parts of the pod obj (after prepareJSON), returning
// the shortened object and the parts; ok false leaves obj as it was.
func (d *partsDecoder) cutPodJSON(obj []byte) (_ []byte, parts *podJSONParts, ok bool) {
	var specSpan, statusSpan [2]int
	count := [2]int{}
	if eachMemberAt(obj, func(key []byte, _, valStart, valEnd int) error {
		switch string(key) {
		case "spec":
			specSpan, count[0] = [2]int{valStart, valEnd}, count[0]+1
		case "status":
			statusSpan, count[1] = [2]int{valStart, valEnd}, count[1]+1
		}
		if bytes.IndexByte(key, '\\') >= 0 {
			return errFound
		}
		return nil
	}) != nil || count[0] > 1 || count[1] > 1 {
		return obj, nil, false
	}
	parts = &podJSONParts{}
	var specKept, statusKept [][2]int
	if count[0] == 1 && obj[specSpan[0]] == '{' {
		spec := obj[specSpan[0]:specSpan[1]]
		nums, vals, kept, ok := cutMembers(spec, jsonSpecMembers)
		if !ok || d.specParts(spec, nums, vals, parts) != nil {
			return obj, nil, false
		}
		specKept = kept
	}
	if count[1] == 1 && obj[statusSpan[0]] == '{' {
		status := obj[statusSpan[0]:statusSpan[1]]
		nums, vals, kept, ok := cutMembers(status, jsonStatusMembers)
		if !ok || d.statusParts(status, nums, vals, parts) != nil {
			return obj, nil, false
		}
		statusKept = kept
	}
	// Rewrite the later object first: the earlier one's offsets stay.
	type cut struct {
		span [2]int
		kept [][2]int
	}
	cuts := []cut{{specSpan, specKept}, {statusSpan, statusKept}}
	if statusSpan[0] < specSpan[0] {
		cuts[0], cuts[1] = cuts[1], cuts[0]
	}
	for i := len(cuts) - 1; i >= 0; i-- {
		c := cuts[i]
		if c.kept == nil && (c.span == [2]int{} || obj[c.span[0]] != '{') {
			continue
		}
		for j := range c.kept { // spans relative to the object
			c.kept[j][0] += c.span[0]
			c.kept[j][1] += c.span[0]
		}
		obj = keepMembers(obj, c.span[0], c.span[1], c.kept)
	}
	return obj, parts, true
}

func (d *partsDecoder) specParts(spec []byte, nums []int, vals [][2]int, p *podJSONParts) (err error) {
	s, in := &p.spec, d.in
	for i, num := range nums {
		v := spec[vals[i][0]:vals[i][1]]
		p.specSet |= 1 << num
		switch num {
		case 1:
			s.Volumes, err = jsonPart(d, siteVolumes, v, clipped, func(vs []corev1.Volume) {
				for i := range vs {
					in.volume(&vs[i])
				}
			})
			if err == nil {
				d.volumes = d.volumes[:0]
				for i := range s.Volumes {
					d.volumes = append(d.volumes, s.Volumes[i].Name)
				}
			}
		case 2:
			s.Containers, err = d.containersJSON(siteContainers, v)
		case 20:
			s.InitContainers, err = d.containersJSON(siteInitContainers, v)
		case 7:
			s.NodeSelector, err = jsonPart(d, siteNodeSelector, v, nil, in.stringMap)
		case 14:
			s.SecurityContext, err = jsonPart(d, sitePodSecurity, v, nil, in.podSecurity)
		case 15:
			s.ImagePullSecrets, err = jsonPart(d, siteImagePullSecrets, v, clipped, in.localRefs)
		case 18:
			s.Affinity, err = jsonPart(d, siteAffinity, v, nil, in.affinity)
		case 22:
			s.Tolerations, err = jsonPart(d, siteTolerations, v, clipped, in.tolerations)
		case 26:
			s.DNSConfig, err = jsonPart(d, siteDNSConfig, v, nil, func(*corev1.PodDNSConfig) {})
		case 28:
			s.ReadinessGates, err = jsonPart(d, siteReadinessGates, v, clipped, func([]corev1.PodReadinessGate) {})
		default: // 33
			s.TopologySpreadConstraints, err = jsonPart(d, siteTopologySpread, v, clipped, in.topologySpread)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// containersJSON decodes the JSON array of containers v: all shared if
// another pod's are encoded alike, else each with its parts shared.
func (d *partsDecoder) containersJSON(site partSite, v []byte) ([]corev1.Container, error) {
	return sharePart(d.t, jsonSite(site), v, func(v []byte) ([]corev1.Container, error) {
		elems, err := eachElement(v, nil)
		if err != nil {
			return nil, err
		}
		cs := make([]corev1.Container, len(elems))
		var scratch []byte
		for i, e := range elems {
			if scratch, err = d.containerJSON(e, &cs[i], scratch); err != nil {
				return nil, err
			}
		}
		return cs, nil
	})
}

// containerJSON decodes the JSON object e into c, its parts shared.
func (d *partsDecoder) containerJSON(e []byte, c *corev1.Container, scratch []byte) ([]byte, error) {
	nums, vals, kept, ok := cutMembers(e, jsonContainerMembers)
	if !ok {
		return scratch, errUnsplittable
	}
	scratch = appendKept(scratch[:0], e, kept)
	if err := kjson.UnmarshalCaseSensitivePreserveInts(scratch, c); err != nil {
		return scratch, err
	}
	in := d.in
	var err error
	for i, num := range nums {
		v := e[vals[i][0]:vals[i][1]]
		switch num {
		case 3:
			c.Command, err = jsonPart(d, siteCommand, v, clipped, in.all)
		case 4:
			c.Args, err = jsonPart(d, siteArgs, v, clipped, in.all)
		case 6:
			c.Ports, err = jsonPart(d, sitePorts, v, clipped, in.ports)
		case 7:
			c.Env, err = jsonPart(d, siteEnv, v, clipped, in.envVars)
		case 8:
			c.Resources, err = jsonPart(d, siteResources, v, func(r corev1.ResourceRequirements) corev1.ResourceRequirements {
				r.Claims = slices.Clip(r.Claims)
				return r
			}, in.resourceNamesOf)
		case 9:
			c.VolumeMounts, err = jsonPart(d, siteMounts, v, clipped, func(ms []corev1.VolumeMount) { in.mounts(ms, d.volumes) })
		case 10:
			c.LivenessProbe, err = jsonPart(d, siteLivenessProbe, v, nil, in.probe)
		case 11:
			c.ReadinessProbe, err = jsonPart(d, siteReadinessProbe, v, nil, in.probe)
		case 22:
			c.StartupProbe, err = jsonPart(d, siteStartupProbe, v, nil, in.probe)
		case 12:
			c.Lifecycle, err = jsonPart(d, siteLifecycle, v, nil, func(*corev1.Lifecycle) {})
		case 15:
			c.SecurityContext, err = jsonPart(d, siteSecurityContext, v, nil, in.securityContext)
		case 19:
			c.EnvFrom, err = jsonPart(d, siteEnvFrom, v, clipped, in.envFrom)
		default: // 23
			c.ResizePolicy, err = jsonPart(d, siteResizePolicy, v, clipped, func([]corev1.ContainerResizePolicy) {})
		}
		if err != nil {
			return scratch, err
		}
	}
	in.containerScalars(c)
	return scratch, nil
}

func (d *partsDecoder) statusParts(status []byte, nums []int, vals [][2]int, p *podJSONParts) error {
	var scratch []byte
	for i, num := range nums {
		p.statusSet |= 1 << num
		elems, err := eachElement(status[vals[i][0]:vals[i][1]], nil)
		if err != nil {
			return err
		}
		cs := make([]corev1.ContainerStatus, len(elems))
		for j, e := range elems {
			if scratch, err = d.containerStatusJSON(e, &cs[j], scratch); err != nil {
				return err
			}
		}
		switch num {
		case 8:
			p.status.ContainerStatuses = cs
		case 10:
			p.status.InitContainerStatuses = cs
		default: // 13
			p.status.EphemeralContainerStatuses = cs
		}
	}
	return nil
}

// containerStatusJSON decodes the JSON object e into c, its parts shared.
func (d *partsDecoder) containerStatusJSON(e []byte, c *corev1.ContainerStatus, scratch []byte) ([]byte, error) {
	nums, vals, kept, ok := cutMembers(e, jsonContainerStatusMembers)
	if !ok {
		return scratch, errUnsplittable
	}
	scratch = appendKept(scratch[:0], e, kept)
	if err := kjson.UnmarshalCaseSensitivePreserveInts(scratch, c); err != nil {
		return scratch, err
	}
	in := d.in
	var err error
	for i, num := range nums {
		v := e[vals[i][0]:vals[i][1]]
		switch num {
		case 10:
			c.AllocatedResources, err = jsonPart(d, siteStatusAllocated, v, nil, in.resourceNames)
		case 11:
			c.Resources, err = jsonPart(d, siteStatusResources, v, nil, func(r *corev1.ResourceRequirements) { in.resourceNamesOf(*r) })
		case 12:
			c.VolumeMounts, err = jsonPart(d, siteStatusMounts, v, clipped, func(ms []corev1.VolumeMountStatus) {
				for i := range ms {
					in.volumeName(&ms[i].Name, d.volumes)
					in.intern(&ms[i].MountPath)
				}
			})
		default: // 13
			c.User, err = jsonPart(d, siteStatusUser, v, nil, func(*corev1.ContainerUser) {})
		}
		if err != nil {
			return scratch, err
		}
	}
	in.containerStatusScalars(c)
	return scratch, nil
}

// apply sets the cut parts on p, decoded without them, and interns the
// rest of its spec and status.
func (parts *podJSONParts) apply(p *corev1.Pod, in *interning) {
	s, c := &p.Spec, &parts.spec
	for num := 0; num < 64; num++ {
		if !parts.specSet.has(protowire.Number(num)) {
			continue
		}
		switch num {
		case 1:
			s.Volumes = c.Volumes
		case 2:
			s.Containers = c.Containers
		case 20:
			s.InitContainers = c.InitContainers
		case 7:
			s.NodeSelector = c.NodeSelector
		case 14:
			s.SecurityContext = c.SecurityContext
		case 15:
			s.ImagePullSecrets = c.ImagePullSecrets
		case 18:
			s.Affinity = c.Affinity
		case 22:
			s.Tolerations = c.Tolerations
		case 26:
			s.DNSConfig = c.DNSConfig
		case 28:
			s.ReadinessGates = c.ReadinessGates
		case 33:
			s.TopologySpreadConstraints = c.TopologySpreadConstraints
		}
	}
	st := &p.Status
	if parts.statusSet.has(8) {
		st.ContainerStatuses = parts.status.ContainerStatuses
	}
	if parts.statusSet.has(10) {
		st.InitContainerStatuses = parts.status.InitContainerStatuses
	}
	if parts.statusSet.has(13) {
		st.EphemeralContainerStatuses = parts.status.EphemeralContainerStatuses
	}
	// What the typed decoder decoded: the members not cut (or null).
	if !parts.specSet.has(1) {
		for i := range s.Volumes {
			in.volume(&s.Volumes[i])
		}
	}
	if !parts.specSet.has(20) {
		for i := range s.InitContainers {
			in.container(&s.InitContainers[i])
		}
	}
	if !parts.specSet.has(2) {
		for i := range s.Containers {
			in.container(&s.Containers[i])
		}
	}
	if !parts.specSet.has(7) {
		in.stringMap(s.NodeSelector)
	}
	if !parts.specSet.has(15) {
		in.localRefs(s.ImagePullSecrets)
	}
	if !parts.specSet.has(22) {
		in.tolerations(s.Tolerations)
	}
	if !parts.specSet.has(14) {
		in.podSecurity(s.SecurityContext)
	}
	if !parts.specSet.has(18) {
		in.affinity(s.Affinity)
	}
	if !parts.specSet.has(33) {
		in.topologySpread(s.TopologySpreadConstraints)
	}
	s.Overhead = in.resourceList(s.Overhead)
	in.podSpecScalars(s)
	for num, cs := range [][]corev1.ContainerStatus{8: st.ContainerStatuses, 10: st.InitContainerStatuses, 13: st.EphemeralContainerStatuses} {
		if !parts.statusSet.has(protowire.Number(num)) {
			for i := range cs {
				in.containerStatus(&cs[i], nil)
			}
		}
	}
	st.AllocatedResources = in.resourceList(st.AllocatedResources)
	in.resources(st.Resources)
	in.podStatusScalars(st)
}

// cutDataJSON cuts a ConfigMap's data from obj: the map shared whole with
// every ConfigMap whose data is encoded alike, else keys and short values
// interned and long values shared one by one. ok false leaves obj as it
// was.
func (d *partsDecoder) cutDataJSON(obj []byte) (_ []byte, data map[string]string, ok bool) {
	nums, vals, kept, ok := cutMembers(obj, map[string]int{"data": 2})
	if !ok || len(nums) == 0 || obj[vals[0][0]] != '{' {
		return obj, nil, false
	}
	v := obj[vals[0][0]:vals[0][1]]
	data, err := sharePart(d.t, jsonSite(siteData), v, func(v []byte) (map[string]string, error) {
		m := map[string]string{}
		err := eachMember(v, func(key, val []byte) error {
			if bytes.IndexByte(key, '\\') >= 0 || len(val) == 0 || val[0] != '"' {
				return errUnsplittable
			}
			if len(val) <= MaxInternedLen+2 {
				s, ok := jsonInternedString(val, d.in)
				if !ok {
					return errUnsplittable
				}
				m[d.in.bytes(key)] = s
				return nil
			}
			s, err := sharePart(d.t, jsonSite(siteDataValue), val, func(val []byte) (string, error) {
				b, err := jsonString(val)
				if err != nil || !validUTF8(b) {
					return "", errUnsplittable
				}
				return string(b), nil
			})
			m[d.in.bytes(key)] = s
			return err
		})
		return m, err
	})
	if err != nil {
		return obj, nil, false
	}
	start, end := skipSpace(obj, 0), len(bytes.TrimRight(obj, " \t\r\n"))
	return keepMembers(obj, start, end, kept), data, true
}
