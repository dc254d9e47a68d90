package restsource

import (
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// corpusPod is a pod as kube-apiserver serves a Deployment's pod: 3 to 6
// managedFields entries, labels, annotations, an owner reference, 2 to 4
// containers with env, ports, resources and mounts, volumes and a status.
// Pods of the same app (i%apps) share most strings, as replicas do.
func corpusPod(r *rand.Rand, i int) *corev1.Pod {
	ts := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(r.IntN(3600)) * time.Second))
	app := fmt.Sprintf("app-%d", i%7)
	hash := fmt.Sprintf("%x", 0x5d9f8c6b5+i%7)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%s-%05d", app, hash, i), GenerateName: app + "-" + hash + "-",
			Namespace: fmt.Sprintf("team-%d", i%3), UID: types.UID(fmt.Sprintf("3f2a7c1e-%04d-4000-8000-%012d", i%10000, r.Int64N(1e12))),
			ResourceVersion: fmt.Sprint(100000 + r.IntN(1e6)), Generation: int64(1 + r.IntN(3)), CreationTimestamp: ts,
			Labels: map[string]string{"app": app, "app.kubernetes.io/name": app, "app.kubernetes.io/instance": app + "-prod",
				"app.kubernetes.io/version": "1.4.2", "pod-template-hash": hash, "tier": "web"},
			Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090",
				"kubectl.kubernetes.io/restartedAt": ts.UTC().Format(time.RFC3339), "note": "ünïcødé \"quoted\" \\ back\nslash"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-" + hash,
				UID: types.UID(fmt.Sprintf("9b1d2c3e-0000-4000-8000-%012d", i%7)), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			Finalizers: []string{"example.com/protect"},
		},
		Spec: corev1.PodSpec{
			NodeName: fmt.Sprintf("node-%d", r.IntN(20)), ServiceAccountName: app, RestartPolicy: corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr.To(int64(30)), DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler",
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists,
				Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(300))}},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}},
				{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
						Path: "token", ExpirationSeconds: ptr.To(int64(3607))}}}}}},
			},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBurstable, StartTime: &ts,
			HostIP: fmt.Sprintf("10.0.%d.1", r.IntN(20)), PodIP: fmt.Sprintf("10.244.%d.%d", r.IntN(250), r.IntN(250)),
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: ts},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: ts}}},
	}
	for c := range 2 + r.IntN(3) {
		name := []string{"server", "sidecar", "proxy", "exporter"}[c]
		image := fmt.Sprintf("registry.example.com/shop/%s-%s:1.4.%d", app, name, i%7)
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{
			Name: name, Image: image, Args: []string{"--port=8080", "--log-level=info"},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: int32(8080 + c), Protocol: corev1.ProtocolTCP}},
			Env: []corev1.EnvVar{{Name: "APP", Value: app}, {Name: "ENV", Value: "production"}, {Name: "REPLICA", Value: fmt.Sprint(i)},
				{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"},
				{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz",
				Port: intstr.FromInt32(int32(8080 + c))}}, PeriodSeconds: 10},
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy: corev1.PullIfNotPresent,
		})
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: name, Ready: true, Image: image, ImageID: image + "@sha256:4c1e0d6f3b8a9e7c2d5f1a0b3c6e9d8f",
			ContainerID: fmt.Sprintf("containerd://%016x", r.Uint64()), Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ts}}})
	}
	managers := []struct{ manager, subresource, fields string }{
		{"kube-controller-manager", "", `{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"9b1d2c3e\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"server\"}":{".":{},"f:env":{},"f:image":{},"f:name":{},"f:ports":{},"f:resources":{}}},"f:volumes":{}}}`},
		{"kubelet", "status", `{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:startTime":{}}}`},
		{"kube-scheduler", "status", `{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"PodScheduled\"}":{".":{},"f:lastProbeTime":{},"f:status":{},"f:type":{}}}}}`},
		{"kubectl-annotate", "", `{"f:metadata":{"f:annotations":{"f:note":{}}}}`},
		{"istio-sidecar-injector", "", `{"f:metadata":{"f:annotations":{"f:prometheus.io/port":{},"f:prometheus.io/scrape":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"proxy\"}":{".":{},"f:image":{},"f:name":{}}}}}`},
		{"kubectl-client-side-apply", "", `{"f:metadata":{"f:labels":{"f:tier":{}}}}`},
	}
	for _, m := range managers[:3+r.IntN(4)] {
		op := metav1.ManagedFieldsOperationUpdate
		if m.manager == "kubectl-client-side-apply" {
			op = metav1.ManagedFieldsOperationApply
		}
		p.ManagedFields = append(p.ManagedFields, metav1.ManagedFieldsEntry{Manager: m.manager, Operation: op, APIVersion: "v1",
			Time: &ts, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(m.fields), Subresource: m.subresource})
	}
	return p
}

// corpusPods returns n corpus pods, the same for the same seed.
func corpusPods(n int, seed uint64) []*corev1.Pod {
	r := rand.New(rand.NewPCG(seed, 16))
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = corpusPod(r, i)
	}
	return pods
}
