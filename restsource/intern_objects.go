package restsource

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// The walkers below replace the strings of a decoded object that tend to
// repeat across objects by their interned copies: the copies the decoder
// made become garbage at once, and the cache holds one of each. Strings
// unique to an object (name, uid, resourceVersion, IPs, container IDs)
// are left alone: interning them would only churn the table. Metadata is
// interned for every type with an ObjectMeta; the specs and statuses of
// pods, the bulk of most caches, by the walkers below; custom resources'
// strings by reflection (intern_any.go).

// interning is one object's pass over its strings; it counts its hits
// and misses, added to the Interner's at the end.
type interning struct {
	*Interner
	// policy is what the Source's options ask of every pass, decided once
	// (objectDecoder.policy); it does not change during the pass.
	policy passPolicy
	// decoded is what decoding interned already, which object skips: it
	// only grows, holds doneMetaShared only with doneMetaStrings, and
	// doneRest of a kind with a walker of its own (not walksAny) only in
	// doneAll.
	decoded      passDone
	hits, misses uint64
	scalar       [8]byte // the encoding of a small value whose pointer is shared (intern_parts.go)
}

// passPolicy is a set of what a pass does beyond interning strings.
type passPolicy uint8

const (
	sharesLists passPolicy = 1 << iota // resource lists shared whole (Options.ShareResourceLists, or ShareRepeated)
	sharesParts                        // parts shared (Options.ShareRepeated), in a pass begun while decoding
	walksAny                           // a type without a walker of its own walked by reflection (intern_any.go)
)

// passDone is a set of the parts of an object that decoding interned.
type passDone uint8

const (
	doneMetaStrings passDone = 1 << iota // the metadata's namespace, generateName, labels, annotations, finalizers
	doneMetaShared                       // its owner references and managed fields (shared parts)
	doneRest                             // the rest of the object (its parts, or what unmarshalInterned decoded)
	doneAll         = doneMetaStrings | doneMetaShared | doneRest
)

// newPass begins the pass over one object of a Source with policy, done
// saying what its decoding interned: none of it, a pass begun after
// decoding, shares no parts.
func newPass(in *Interner, policy passPolicy, done passDone) *interning {
	if done == 0 {
		policy &^= sharesParts
	}
	return &interning{Interner: in, policy: policy, decoded: done}
}

// bytes interns b, counting.
func (in *interning) bytes(b []byte) string {
	t, hit, counted := in.lookupBytes(b)
	in.count(hit, counted)
	return t
}

// String interns s, counting.
func (in *interning) String(s string) string {
	t, _ := in.internHit(s)
	return t
}

func (in *interning) count(hit, counted bool) {
	switch {
	case hit:
		in.hits++
	case counted:
		in.misses++
	}
}

// done adds the pass's counts to the Interner's.
func (in *interning) done() {
	in.Interner.hits.Add(in.hits)
	in.Interner.misses.Add(in.misses)
}

// object interns the repeating strings of obj.
func (in *interning) object(obj any) {
	if om := objectMetaOf(obj); om != nil {
		in.objectMeta(om)
	}
	if in.decoded&doneRest != 0 {
		return
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		in.podSpec(&o.Spec)
		in.podStatus(&o.Status)
	case *corev1.PodTemplate:
		in.objectMeta(&o.Template.ObjectMeta)
		in.podSpec(&o.Template.Spec)
	case *unstructured.Unstructured:
		in.unstructuredObject(o.Object)
	default:
		if in.policy&walksAny != 0 {
			in.anyObject(obj)
		}
	}
}

// internHit interns s, reporting whether it was found (not a first or
// second sighting).
func (in *interning) internHit(s string) (string, bool) {
	t, hit, counted := in.lookup(s)
	in.count(hit, counted)
	return t, hit
}

func (in *interning) intern(s *string) {
	*s = in.String(*s)
}

func (in *interning) all(ss []string) {
	for i := range ss {
		ss[i] = in.String(ss[i])
	}
}

// stringMap interns the keys and values of m in place: assigning to an
// existing key stores the new key too.
func (in *interning) stringMap(m map[string]string) {
	for k, v := range m {
		m[in.String(k)] = in.String(v)
	}
}

func (in *interning) objectMeta(m *metav1.ObjectMeta) {
	if in.decoded&doneMetaStrings == 0 {
		in.intern(&m.Namespace)
		in.intern(&m.GenerateName)
		in.stringMap(m.Labels)
		in.stringMap(m.Annotations)
		in.all(m.Finalizers)
	}
	if in.decoded&doneMetaShared == 0 {
		in.ownerRefs(m.OwnerReferences)
		in.managedFields(m.ManagedFields)
	}
}

func (in *interning) ownerRefs(refs []metav1.OwnerReference) {
	for i := range refs {
		r := &refs[i]
		in.intern(&r.APIVersion)
		in.intern(&r.Kind)
		in.intern(&r.Name)
		r.UID = types.UID(in.String(string(r.UID)))
	}
}

func (in *interning) managedFields(fs []metav1.ManagedFieldsEntry) {
	for i := range fs {
		f := &fs[i]
		in.intern(&f.Manager)
		in.intern(&f.APIVersion)
		in.intern(&f.FieldsType)
		in.intern(&f.Subresource)
		f.Operation = metav1.ManagedFieldsOperationType(in.String(string(f.Operation)))
	}
}

func (in *interning) podSpec(s *corev1.PodSpec) {
	for i := range s.Volumes {
		in.volume(&s.Volumes[i])
	}
	for i := range s.InitContainers {
		in.container(&s.InitContainers[i])
	}
	for i := range s.Containers {
		in.container(&s.Containers[i])
	}
	in.stringMap(s.NodeSelector)
	in.localRefs(s.ImagePullSecrets)
	in.tolerations(s.Tolerations)
	if s.SecurityContext != nil {
		in.podSecurity(s.SecurityContext)
	}
	in.affinity(s.Affinity)
	s.Overhead = in.resourceList(s.Overhead)
	in.podSpecScalars(s)
}

// podSpecScalars interns the pod spec's own strings.
func (in *interning) podSpecScalars(s *corev1.PodSpec) {
	s.RestartPolicy = corev1.RestartPolicy(in.String(string(s.RestartPolicy)))
	s.DNSPolicy = corev1.DNSPolicy(in.String(string(s.DNSPolicy)))
	in.intern(&s.ServiceAccountName)
	in.intern(&s.DeprecatedServiceAccount)
	in.intern(&s.NodeName)
	in.intern(&s.Subdomain)
	in.intern(&s.SchedulerName)
	in.intern(&s.PriorityClassName)
	if s.PreemptionPolicy != nil {
		*s.PreemptionPolicy = corev1.PreemptionPolicy(in.String(string(*s.PreemptionPolicy)))
		s.PreemptionPolicy = stringPtr(in, sitePreemptPtr, s.PreemptionPolicy)
	}
	if s.RuntimeClassName != nil {
		in.intern(s.RuntimeClassName)
		s.RuntimeClassName = stringPtr(in, siteStringPtr, s.RuntimeClassName)
	}
	s.Priority = in.int32Ptr(s.Priority)
	s.EnableServiceLinks = in.boolPtr(s.EnableServiceLinks)
	s.TerminationGracePeriodSeconds = in.int64Ptr(s.TerminationGracePeriodSeconds)
	s.AutomountServiceAccountToken = in.boolPtr(s.AutomountServiceAccountToken)
	s.ShareProcessNamespace = in.boolPtr(s.ShareProcessNamespace)
	s.HostUsers = in.boolPtr(s.HostUsers)
	s.SetHostnameAsFQDN = in.boolPtr(s.SetHostnameAsFQDN)
}

func (in *interning) localRefs(refs []corev1.LocalObjectReference) {
	for i := range refs {
		in.intern(&refs[i].Name)
	}
}

func (in *interning) tolerations(ts []corev1.Toleration) {
	for i := range ts {
		t := &ts[i]
		in.intern(&t.Key)
		in.intern(&t.Value)
		t.Operator = corev1.TolerationOperator(in.String(string(t.Operator)))
		t.Effect = corev1.TaintEffect(in.String(string(t.Effect)))
	}
}

// affinity interns the topology keys and label selectors of a pod's
// affinity terms.
func (in *interning) affinity(a *corev1.Affinity) {
	if a == nil {
		return
	}
	terms := func(ts []corev1.PodAffinityTerm) {
		for i := range ts {
			in.intern(&ts[i].TopologyKey)
			in.all(ts[i].Namespaces)
			in.labelSelector(ts[i].LabelSelector)
			in.labelSelector(ts[i].NamespaceSelector)
		}
	}
	weighted := func(ts []corev1.WeightedPodAffinityTerm) {
		for i := range ts {
			terms([]corev1.PodAffinityTerm{ts[i].PodAffinityTerm})
		}
	}
	if p := a.PodAffinity; p != nil {
		terms(p.RequiredDuringSchedulingIgnoredDuringExecution)
		weighted(p.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if p := a.PodAntiAffinity; p != nil {
		terms(p.RequiredDuringSchedulingIgnoredDuringExecution)
		weighted(p.PreferredDuringSchedulingIgnoredDuringExecution)
	}
}

func (in *interning) labelSelector(s *metav1.LabelSelector) {
	if s == nil {
		return
	}
	in.stringMap(s.MatchLabels)
	for i := range s.MatchExpressions {
		e := &s.MatchExpressions[i]
		in.intern(&e.Key)
		e.Operator = metav1.LabelSelectorOperator(in.String(string(e.Operator)))
		in.all(e.Values)
	}
}

func (in *interning) podSecurity(c *corev1.PodSecurityContext) {
	if c != nil && c.SeccompProfile != nil {
		c.SeccompProfile.Type = corev1.SeccompProfileType(in.String(string(c.SeccompProfile.Type)))
	}
}

func (in *interning) securityContext(c *corev1.SecurityContext) {
	if c == nil {
		return
	}
	if c.SeccompProfile != nil {
		c.SeccompProfile.Type = corev1.SeccompProfileType(in.String(string(c.SeccompProfile.Type)))
	}
	if cp := c.Capabilities; cp != nil {
		for _, l := range [][]corev1.Capability{cp.Add, cp.Drop} {
			for i := range l {
				l[i] = corev1.Capability(in.String(string(l[i])))
			}
		}
	}
}

func (in *interning) topologySpread(cs []corev1.TopologySpreadConstraint) {
	for i := range cs {
		c := &cs[i]
		in.intern(&c.TopologyKey)
		c.WhenUnsatisfiable = corev1.UnsatisfiableConstraintAction(in.String(string(c.WhenUnsatisfiable)))
		in.labelSelector(c.LabelSelector)
		in.all(c.MatchLabelKeys)
	}
}

func (in *interning) volume(v *corev1.Volume) {
	in.intern(&v.Name)
	in.volumeSource(v.VolumeSource)
}

// volumeSource interns the strings of a volume's source (a value whose
// fields are pointers: the strings it points to).
func (in *interning) volumeSource(v corev1.VolumeSource) {
	switch {
	case v.ConfigMap != nil:
		in.intern(&v.ConfigMap.Name)
		in.keyPaths(v.ConfigMap.Items)
	case v.Secret != nil:
		in.intern(&v.Secret.SecretName)
		in.keyPaths(v.Secret.Items)
	case v.PersistentVolumeClaim != nil:
		in.intern(&v.PersistentVolumeClaim.ClaimName)
	case v.HostPath != nil:
		in.intern(&v.HostPath.Path)
	case v.EmptyDir != nil:
		v.EmptyDir.Medium = corev1.StorageMedium(in.String(string(v.EmptyDir.Medium)))
	case v.Projected != nil:
		for i := range v.Projected.Sources {
			p := &v.Projected.Sources[i]
			if p.ServiceAccountToken != nil {
				in.intern(&p.ServiceAccountToken.Path)
				in.intern(&p.ServiceAccountToken.Audience)
			}
			if p.ConfigMap != nil {
				in.intern(&p.ConfigMap.Name)
				in.keyPaths(p.ConfigMap.Items)
			}
			if p.Secret != nil {
				in.intern(&p.Secret.Name)
				in.keyPaths(p.Secret.Items)
			}
			if p.DownwardAPI != nil {
				for j := range p.DownwardAPI.Items {
					f := &p.DownwardAPI.Items[j]
					in.intern(&f.Path)
					if f.FieldRef != nil {
						in.intern(&f.FieldRef.APIVersion)
						in.intern(&f.FieldRef.FieldPath)
					}
				}
			}
		}
	}
}

func (in *interning) keyPaths(items []corev1.KeyToPath) {
	for i := range items {
		in.intern(&items[i].Key)
		in.intern(&items[i].Path)
	}
}

func (in *interning) container(c *corev1.Container) {
	in.all(c.Command)
	in.all(c.Args)
	in.ports(c.Ports)
	in.envFrom(c.EnvFrom)
	in.envVars(c.Env)
	in.resources(&c.Resources)
	in.mounts(c.VolumeMounts, nil)
	in.probe(c.LivenessProbe)
	in.probe(c.ReadinessProbe)
	in.probe(c.StartupProbe)
	in.containerScalars(c)
}

// containerScalars interns a container's own strings.
func (in *interning) containerScalars(c *corev1.Container) {
	in.intern(&c.Name)
	in.intern(&c.Image)
	in.intern(&c.WorkingDir)
	in.intern(&c.TerminationMessagePath)
	c.TerminationMessagePolicy = corev1.TerminationMessagePolicy(in.String(string(c.TerminationMessagePolicy)))
	c.ImagePullPolicy = corev1.PullPolicy(in.String(string(c.ImagePullPolicy)))
}

func (in *interning) ports(ps []corev1.ContainerPort) {
	for i := range ps {
		p := &ps[i]
		in.intern(&p.Name)
		p.Protocol = corev1.Protocol(in.String(string(p.Protocol)))
		in.intern(&p.HostIP)
	}
}

func (in *interning) envFrom(es []corev1.EnvFromSource) {
	for i := range es {
		e := &es[i]
		in.intern(&e.Prefix)
		if e.ConfigMapRef != nil {
			in.intern(&e.ConfigMapRef.Name)
		}
		if e.SecretRef != nil {
			in.intern(&e.SecretRef.Name)
		}
	}
}

func (in *interning) envVars(env []corev1.EnvVar) {
	for i := range env {
		e := &env[i]
		in.intern(&e.Name)
		in.intern(&e.Value)
		if s := e.ValueFrom; s != nil {
			if s.FieldRef != nil {
				in.intern(&s.FieldRef.APIVersion)
				in.intern(&s.FieldRef.FieldPath)
			}
			if s.ResourceFieldRef != nil {
				in.intern(&s.ResourceFieldRef.ContainerName)
				in.intern(&s.ResourceFieldRef.Resource)
			}
			if s.ConfigMapKeyRef != nil {
				in.intern(&s.ConfigMapKeyRef.Name)
				in.intern(&s.ConfigMapKeyRef.Key)
			}
			if s.SecretKeyRef != nil {
				in.intern(&s.SecretKeyRef.Name)
				in.intern(&s.SecretKeyRef.Key)
			}
		}
	}
}

func (in *interning) resources(r *corev1.ResourceRequirements) {
	if r == nil {
		return
	}
	r.Limits = in.resourceList(r.Limits)
	r.Requests = in.resourceList(r.Requests)
}

// mounts interns the volume mounts' strings; a mount's name is taken from
// volumes (the pod's own volume names) when one is equal, so that a name
// unique to the pod (a service-account token volume's) is one string
// without passing through the Interner.
func (in *interning) mounts(ms []corev1.VolumeMount, volumes []string) {
	for i := range ms {
		m := &ms[i]
		in.volumeName(&m.Name, volumes)
		in.intern(&m.MountPath)
		in.intern(&m.SubPath)
	}
}

// volumeName sets *s to the equal one of volumes, if any, else interns it.
func (in *interning) volumeName(s *string, volumes []string) {
	for _, v := range volumes {
		if v == *s {
			*s = v
			return
		}
	}
	in.intern(s)
}

// resourceList interns the resource names (the map's keys) or, with
// sharesLists, returns the Interner's equal list if it has one (whose
// names were interned when it was added).
func (in *interning) resourceList(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 {
		return l
	}
	if in.policy&sharesLists != 0 { // a shared list's names are interned already
		return in.shareList(l, in.resourceNames)
	}
	in.resourceNames(l)
	return l
}

// resourceNamesOf interns the resource names of r's lists, in place.
func (in *interning) resourceNamesOf(r corev1.ResourceRequirements) {
	in.resourceNames(r.Limits)
	in.resourceNames(r.Requests)
}

func (in *interning) resourceNames(l corev1.ResourceList) {
	for k, v := range l {
		l[corev1.ResourceName(in.String(string(k)))] = v
	}
}

func (in *interning) probe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if g := p.HTTPGet; g != nil {
		in.intern(&g.Path)
		in.intern(&g.Port.StrVal)
		in.intern(&g.Host)
		g.Scheme = corev1.URIScheme(in.String(string(g.Scheme)))
	}
	if e := p.Exec; e != nil {
		in.all(e.Command)
	}
	if t := p.TCPSocket; t != nil {
		in.intern(&t.Port.StrVal)
	}
}

func (in *interning) podStatus(s *corev1.PodStatus) {
	for _, cs := range [][]corev1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range cs {
			in.containerStatus(&cs[i], nil)
		}
	}
	s.AllocatedResources = in.resourceList(s.AllocatedResources)
	in.resources(s.Resources)
	in.podStatusScalars(s)
}

// podStatusScalars interns the pod status's own strings.
func (in *interning) podStatusScalars(s *corev1.PodStatus) {
	s.Phase = corev1.PodPhase(in.String(string(s.Phase)))
	if cap(s.Conditions) > len(s.Conditions) { // grown by doubling as decoded: 5 conditions held 8
		s.Conditions = slices.Clone(s.Conditions)
	}
	for i := range s.Conditions {
		c := &s.Conditions[i]
		c.Type = corev1.PodConditionType(in.String(string(c.Type)))
		c.Status = corev1.ConditionStatus(in.String(string(c.Status)))
		in.intern(&c.Reason)
		in.intern(&c.Message)
	}
	in.intern(&s.Reason)
	in.intern(&s.NominatedNodeName)
	in.intern(&s.HostIP)
	for i := range s.HostIPs {
		in.intern(&s.HostIPs[i].IP)
	}
	for i := range s.PodIPs { // the pod's own IP, given twice
		if s.PodIPs[i].IP == s.PodIP {
			s.PodIPs[i].IP = s.PodIP
		}
	}
	s.QOSClass = corev1.PodQOSClass(in.String(string(s.QOSClass)))
}

// containerStatus interns a container status's strings and, with
// ShareResourceLists, shares its resource lists; volumes are the pod's
// volume names, for the mounts.
func (in *interning) containerStatus(c *corev1.ContainerStatus, volumes []string) {
	in.containerStatusScalars(c)
	c.AllocatedResources = in.resourceList(c.AllocatedResources)
	in.resources(c.Resources)
	in.mountStatuses(c.VolumeMounts, volumes)
}

// mountStatuses interns a container status's volume mounts; volumes are
// the pod's volume names.
func (in *interning) mountStatuses(ms []corev1.VolumeMountStatus, volumes []string) {
	for i := range ms {
		m := &ms[i]
		in.volumeName(&m.Name, volumes)
		in.intern(&m.MountPath)
		m.RecursiveReadOnly = stringPtr(in, siteRecursivePtr, m.RecursiveReadOnly)
	}
}

func (in *interning) containerStatusScalars(c *corev1.ContainerStatus) {
	in.intern(&c.Name)
	in.intern(&c.Image)
	in.intern(&c.ImageID)
	in.containerState(&c.State)
	in.containerState(&c.LastTerminationState)
	if t := c.State.Terminated; t != nil && t.ContainerID == c.ContainerID { // the container's own ID, given twice
		t.ContainerID = c.ContainerID
	}
	c.Started = in.boolPtr(c.Started)
}

func (in *interning) containerState(s *corev1.ContainerState) {
	if w := s.Waiting; w != nil {
		in.intern(&w.Reason)
		in.intern(&w.Message)
	}
	if t := s.Terminated; t != nil {
		in.intern(&t.Reason)
		in.intern(&t.Message)
	}
}
