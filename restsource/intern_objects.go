package restsource

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The walkers below replace the strings of a decoded object that tend to
// repeat across objects by their interned copies: the copies the decoder
// made become garbage at once, and the cache holds one of each. Strings
// unique to an object (name, uid, resourceVersion, IPs, container IDs)
// are left alone: interning them would only churn the table. Metadata is
// interned for every type with an ObjectMeta; the specs and statuses of
// pods, the bulk of most caches, too.

// interning is one object's pass over its strings; it counts its hits
// and misses, added to the Interner's at the end.
type interning struct {
	*Interner
	shareLists   bool // Options.ShareResourceLists
	metaDone     bool // the metadata's strings were interned while decoding
	hits, misses uint64
}

// bytes interns b, counting.
func (in *interning) bytes(b []byte) string {
	t, hit, counted := in.lookupBytes(b)
	in.count(hit, counted)
	return t
}

// String interns s, counting.
func (in *interning) String(s string) string {
	t, hit, counted := in.lookup(s)
	in.count(hit, counted)
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
	switch o := obj.(type) {
	case *corev1.Pod:
		in.podSpec(&o.Spec)
		in.podStatus(&o.Status)
	case *corev1.PodTemplate:
		in.objectMeta(&o.Template.ObjectMeta)
		in.podSpec(&o.Template.Spec)
	}
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
	if !in.metaDone {
		in.intern(&m.Namespace)
		in.intern(&m.GenerateName)
		in.stringMap(m.Labels)
		in.stringMap(m.Annotations)
		in.all(m.Finalizers)
	}
	for i := range m.OwnerReferences {
		r := &m.OwnerReferences[i]
		in.intern(&r.APIVersion)
		in.intern(&r.Kind)
		in.intern(&r.Name)
		r.UID = types.UID(in.String(string(r.UID)))
	}
	for i := range m.ManagedFields {
		f := &m.ManagedFields[i]
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
	s.RestartPolicy = corev1.RestartPolicy(in.String(string(s.RestartPolicy)))
	s.DNSPolicy = corev1.DNSPolicy(in.String(string(s.DNSPolicy)))
	in.stringMap(s.NodeSelector)
	in.intern(&s.ServiceAccountName)
	in.intern(&s.DeprecatedServiceAccount)
	in.intern(&s.NodeName)
	in.intern(&s.Subdomain)
	in.intern(&s.SchedulerName)
	in.intern(&s.PriorityClassName)
	for i := range s.ImagePullSecrets {
		in.intern(&s.ImagePullSecrets[i].Name)
	}
	for i := range s.Tolerations {
		t := &s.Tolerations[i]
		in.intern(&t.Key)
		in.intern(&t.Value)
		t.Operator = corev1.TolerationOperator(in.String(string(t.Operator)))
		t.Effect = corev1.TaintEffect(in.String(string(t.Effect)))
	}
	if s.PreemptionPolicy != nil {
		*s.PreemptionPolicy = corev1.PreemptionPolicy(in.String(string(*s.PreemptionPolicy)))
	}
	if s.RuntimeClassName != nil {
		in.intern(s.RuntimeClassName)
	}
	if s.SecurityContext != nil {
		in.podSecurity(s.SecurityContext)
	}
	s.Overhead = in.resourceList(s.Overhead)
}

func (in *interning) podSecurity(c *corev1.PodSecurityContext) {
	if c.SeccompProfile != nil {
		c.SeccompProfile.Type = corev1.SeccompProfileType(in.String(string(c.SeccompProfile.Type)))
	}
}

func (in *interning) volume(v *corev1.Volume) {
	in.intern(&v.Name)
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
	in.intern(&c.Name)
	in.intern(&c.Image)
	in.all(c.Command)
	in.all(c.Args)
	in.intern(&c.WorkingDir)
	for i := range c.Ports {
		p := &c.Ports[i]
		in.intern(&p.Name)
		p.Protocol = corev1.Protocol(in.String(string(p.Protocol)))
		in.intern(&p.HostIP)
	}
	for i := range c.EnvFrom {
		e := &c.EnvFrom[i]
		in.intern(&e.Prefix)
		if e.ConfigMapRef != nil {
			in.intern(&e.ConfigMapRef.Name)
		}
		if e.SecretRef != nil {
			in.intern(&e.SecretRef.Name)
		}
	}
	for i := range c.Env {
		e := &c.Env[i]
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
	c.Resources.Limits = in.resourceList(c.Resources.Limits)
	c.Resources.Requests = in.resourceList(c.Resources.Requests)
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		in.intern(&m.Name)
		in.intern(&m.MountPath)
		in.intern(&m.SubPath)
	}
	in.probe(c.LivenessProbe)
	in.probe(c.ReadinessProbe)
	in.probe(c.StartupProbe)
	in.intern(&c.TerminationMessagePath)
	c.TerminationMessagePolicy = corev1.TerminationMessagePolicy(in.String(string(c.TerminationMessagePolicy)))
	c.ImagePullPolicy = corev1.PullPolicy(in.String(string(c.ImagePullPolicy)))
}

// resourceList interns the resource names (the map's keys) or, with
// shareLists, returns the Interner's equal list if it has one (whose
// names were interned when it was added).
func (in *interning) resourceList(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 {
		return l
	}
	if in.shareLists { // a shared list's names are interned already
		return in.shareList(l, in.resourceNames)
	}
	in.resourceNames(l)
	return l
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
	s.Phase = corev1.PodPhase(in.String(string(s.Phase)))
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
	s.QOSClass = corev1.PodQOSClass(in.String(string(s.QOSClass)))
	for _, cs := range [][]corev1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
		for i := range cs {
			c := &cs[i]
			in.intern(&c.Name)
			in.intern(&c.Image)
			in.intern(&c.ImageID)
			in.containerState(&c.State)
			in.containerState(&c.LastTerminationState)
		}
	}
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
