package objects

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Created is the creation time of every RealisticPod (and the time of its
// conditions and managedFields entries).
var Created = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

// RealisticNamespaces is the number of namespaces RealisticPods spread
// over: pod i is in namespace "ns-<i%RealisticNamespaces>".
const RealisticNamespaces = 100

// A PodShape is how much of what controllers add a RealisticPod carries.
type PodShape struct {
	// Containers is the number of containers, and of container
	// statuses: 1 to 4 (server, sidecar, proxy, exporter); 0 means 1.
	Containers int
	// ManagedFields is the number of managedFields entries, 0 to 6: the
	// first of kube-controller-manager's and the kubelet's (as every pod
	// of a Deployment has), then kube-scheduler's,
	// istio-sidecar-injector's, kubectl-rollout's and argocd-controller's
	// (an apply).
	ManagedFields int
}

// Pod shapes the tests use.
var (
	// PlainPod is a pod as a client that strips managedFields holds it.
	PlainPod = PodShape{Containers: 1}
	// ManagedPod is PlainPod with the two managedFields entries every
	// Deployment's pod has.
	ManagedPod = PodShape{Containers: 1, ManagedFields: 2}
)

// MixedShape is the shape of pod i in a corpus of pods as a real
// kube-apiserver serves a Deployment's pods after a few controllers have
// touched them: 2 to 4 containers, 3 to 6 managedFields entries, varying
// with i.
func MixedShape(i int) PodShape {
	return PodShape{Containers: 2 + i%3, ManagedFields: 3 + i%4}
}

// RealisticPod is pod i of a corpus of realistic pods (with PlainPod,
// about 3.5 KB as JSON): ten labels, annotations, an owner reference (a
// ReplicaSet of one of 200 apps), containers with env, ports, resources,
// mounts and a probe, volumes, tolerations, conditions and container
// statuses, spread over RealisticNamespaces namespaces and 500 nodes. The
// same i and shape give the same pod; every field is set as a server sets
// it (uid, resourceVersion 1000+i, creationTimestamp Created).
func RealisticPod(i int, shape PodShape) *corev1.Pod {
	if shape.Containers == 0 {
		shape.Containers = 1
	}
	if shape.Containers < 1 || shape.Containers > len(containerNames) || shape.ManagedFields < 0 || shape.ManagedFields > len(managers) {
		panic(fmt.Sprintf("objects.RealisticPod: shape %+v, want 1..%d containers and 0..%d managedFields entries",
			shape, len(containerNames), len(managers)))
	}
	is := strconv.Itoa(i)
	ns := "ns-" + strconv.Itoa(i%RealisticNamespaces)
	app := "app-" + strconv.Itoa(i%200)
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: app + "-7d9f8c6b5-" + is, GenerateName: app + "-7d9f8c6b5-",
			UID: types.UID("3f2a7c1e-0000-4000-8000-" + pad12(i)), ResourceVersion: strconv.Itoa(1000 + i),
			CreationTimestamp: Created,
			Labels: map[string]string{
				"app": app, "app.kubernetes.io/name": app, "app.kubernetes.io/instance": app + "-prod",
				"app.kubernetes.io/version": "1.4.2", "app.kubernetes.io/component": "backend",
				"app.kubernetes.io/part-of": "shop", "app.kubernetes.io/managed-by": "helm",
				"pod-template-hash": "7d9f8c6b5", "tier": "web", "track": "stable",
			},
			Annotations: map[string]string{
				"prometheus.io/scrape": "true", "prometheus.io/port": "9090",
				"kubectl.kubernetes.io/restartedAt": "2026-01-02T03:04:05Z",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet",
				Name: app + "-7d9f8c6b5", UID: "9b1d2c3e-0000-4000-8000-000000000001",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: podSpec(app, i),
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "10.0." + strconv.Itoa(i%250) + ".1",
			PodIP: "10.244." + strconv.Itoa(i%250) + "." + strconv.Itoa(i%200), QOSClass: corev1.PodQOSBurstable,
			StartTime: &Created,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: Created},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: Created},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: Created},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: Created},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "server", Ready: true, RestartCount: 0, Image: "registry.example.com/shop/" + app + ":1.4.2",
				ImageID:     "registry.example.com/shop/" + app + "@sha256:4c1e0d6f3b8a9e7c2d5f1a0b3c6e9d8f7a2b5c4e1d0f9a8b7c6d5e4f3a2b1c0d",
				ContainerID: "containerd://" + pad12(i) + "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6",
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: Created}},
				Started:     ptr.To(true),
			}},
		},
	}
	// The other containers are shallow copies of the first (sharing its
	// slices and maps) with their own name, image and port.
	for c := 1; c < shape.Containers; c++ {
		name := containerNames[c]
		ctr := p.Spec.Containers[0]
		ctr.Name, ctr.Image = name, "registry.example.com/shop/"+app+"-"+name+":1.4.2"
		ctr.Ports = []corev1.ContainerPort{{Name: "http-" + name, ContainerPort: int32(8080 + c), Protocol: corev1.ProtocolTCP}}
		p.Spec.Containers = append(p.Spec.Containers, ctr)
		st := p.Status.ContainerStatuses[0]
		st.Name, st.Image = name, ctr.Image
		st.ContainerID = "containerd://" + pad12(i) + strconv.Itoa(c) + "f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6"
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, st)
	}
	for _, m := range managers[:shape.ManagedFields] {
		p.ManagedFields = append(p.ManagedFields, metav1.ManagedFieldsEntry{
			Manager: m.manager, Operation: m.operation, APIVersion: "v1", Time: &Created,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(m.fields), Subresource: m.subresource,
		})
	}
	return p
}

var containerNames = []string{"server", "sidecar", "proxy", "exporter"}

var managers = []struct {
	manager     string
	operation   metav1.ManagedFieldsOperationType
	subresource string
	fields      string
}{
	{"kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "",
		`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{},"f:tier":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"9b1d2c3e\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"server\"}":{".":{},"f:env":{},"f:image":{},"f:name":{},"f:ports":{},"f:resources":{}}},"f:volumes":{}}}`},
	{"kubelet", metav1.ManagedFieldsOperationUpdate, "status",
		`{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.244.0.1\"}":{}},"f:startTime":{}}}`},
	{"kube-scheduler", metav1.ManagedFieldsOperationUpdate, "status",
		`{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"PodScheduled\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}}}}`},
	{"istio-sidecar-injector", metav1.ManagedFieldsOperationUpdate, "",
		`{"f:metadata":{"f:annotations":{"f:prometheus.io/port":{},"f:prometheus.io/scrape":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"proxy\"}":{".":{},"f:args":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{},"f:resources":{}}}}}`},
	{"kubectl-rollout", metav1.ManagedFieldsOperationUpdate, "",
		`{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/restartedAt":{}}}}`},
	{"argocd-controller", metav1.ManagedFieldsOperationApply, "",
		`{"f:metadata":{"f:labels":{"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/part-of":{}}}}`},
}

func podSpec(app string, i int) corev1.PodSpec {
	return corev1.PodSpec{
		NodeName: "node-" + strconv.Itoa(i%500), ServiceAccountName: app, RestartPolicy: corev1.RestartPolicyAlways,
		TerminationGracePeriodSeconds: ptr.To(int64(30)), DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler",
		Containers: []corev1.Container{{
			Name: "server", Image: "registry.example.com/shop/" + app + ":1.4.2", Args: []string{"--port=8080", "--log-level=info"},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
				{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}},
			Env: []corev1.EnvVar{{Name: "APP", Value: app}, {Name: "ENV", Value: "production"},
				{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"},
				{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
				PeriodSeconds: 10},
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy: corev1.PullIfNotPresent,
		}},
		Volumes: []corev1.Volume{
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}},
			{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
					Path: "token", ExpirationSeconds: ptr.To(int64(3607))}}}}}},
		},
		Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(300))}},
	}
}

// pad12 is i in decimal, zero-padded to 12 digits.
func pad12(i int) string { return fmt.Sprintf("%012d", i) }
