package bench

import (
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// corpusPods is the size of the shared pod corpus: the largest scenario
// (reads during writes) uses all of it, the others a prefix.
const (
	corpusPods      = 160_000
	corpusNamespace = 100
)

var created = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

// makePod builds a realistic pod (about 3.5 KB as JSON): ten labels,
// annotations, an owner reference, one container with env, ports, resources
// and mounts, volumes, conditions and a container status. With managed set
// it also carries managedFields, as a server-side-applied pod does.
func makePod(i int, managed bool) *corev1.Pod {
	is := strconv.Itoa(i)
	ns := "ns-" + strconv.Itoa(i%corpusNamespace)
	app := "app-" + strconv.Itoa(i%200)
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: app + "-7d9f8c6b5-" + is, GenerateName: app + "-7d9f8c6b5-",
			UID: types.UID("3f2a7c1e-0000-4000-8000-" + pad12(i)), ResourceVersion: strconv.Itoa(1000 + i),
			CreationTimestamp: created,
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
				Controller: ptr(true), BlockOwnerDeletion: ptr(true)}},
		},
		Spec: podSpec(app, i),
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "10.0." + strconv.Itoa(i%250) + ".1",
			PodIP: "10.244." + strconv.Itoa(i%250) + "." + strconv.Itoa(i%200), QOSClass: corev1.PodQOSBurstable,
			StartTime: &created,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: created},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: created},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: created},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: created},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "server", Ready: true, RestartCount: 0, Image: "registry.example.com/shop/" + app + ":1.4.2",
				ImageID:     "registry.example.com/shop/" + app + "@sha256:4c1e0d6f3b8a9e7c2d5f1a0b3c6e9d8f7a2b5c4e1d0f9a8b7c6d5e4f3a2b1c0d",
				ContainerID: "containerd://" + pad12(i) + "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6",
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: created}},
				Started:     ptr(true),
			}},
		},
	}
	if managed {
		p.ManagedFields = []metav1.ManagedFieldsEntry{{
			Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "v1", Time: &created, FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{},"f:tier":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"9b1d2c3e\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"server\"}":{".":{},"f:env":{},"f:image":{},"f:name":{},"f:ports":{},"f:resources":{}}},"f:volumes":{}}}`),
		}, {
			Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &created,
			FieldsType: "FieldsV1", Subresource: "status",
			FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.244.0.1\"}":{}},"f:startTime":{}}}`),
		}}
	}
	return p
}

func podSpec(app string, i int) corev1.PodSpec {
	return corev1.PodSpec{
		NodeName: "node-" + strconv.Itoa(i%500), ServiceAccountName: app, RestartPolicy: corev1.RestartPolicyAlways,
		TerminationGracePeriodSeconds: ptr(int64(30)), DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler",
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
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstrPort(8080)}},
				PeriodSeconds: 10},
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy: corev1.PullIfNotPresent,
		}},
		Volumes: []corev1.Volume{
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}},
			{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
					Path: "token", ExpirationSeconds: ptr(int64(3607))}}}}}},
		},
		Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))}},
	}
}

func pad12(i int) string {
	s := strconv.Itoa(i)
	for len(s) < 12 {
		s = "0" + s
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// corpus is built once per test binary: corpusPods pods as a list (values,
// as a decoded PodList holds them) and three later versions of each of the
// first steadyPods, as shallow copies that differ in resourceVersion and
// one label (the specs are shared: nobody modifies them).
type corpus struct {
	list []corev1.Pod
	gens [3][]*corev1.Pod
}

const steadyPods = 100_000

var theCorpus = sync.OnceValue(func() *corpus {
	c := &corpus{list: make([]corev1.Pod, corpusPods)}
	for i := range c.list {
		c.list[i] = *makePod(i, false)
	}
	for g := range c.gens {
		c.gens[g] = make([]*corev1.Pod, steadyPods)
		for i := range c.gens[g] {
			c.gens[g][i] = nextVersion(&c.list[i], g+1)
		}
	}
	return c
})

// nextVersion returns a shallow copy of p at generation gen.
func nextVersion(p *corev1.Pod, gen int) *corev1.Pod {
	q := *p
	q.ResourceVersion = strconv.Itoa(1_000_000*gen + atoi(p.ResourceVersion))
	q.Labels = make(map[string]string, len(p.Labels)+1)
	for k, v := range p.Labels {
		q.Labels[k] = v
	}
	q.Labels["gen"] = strconv.Itoa(gen)
	return &q
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func TestPodSize(t *testing.T) {
	for _, managed := range []bool{false, true} {
		b, err := json.Marshal(makePod(12345, managed))
		if err != nil {
			t.Fatal(err)
		}
		if lo, hi := 3000, 5500; len(b) < lo || len(b) > hi {
			t.Errorf("managed=%v: pod is %d bytes as JSON, want %d..%d", managed, len(b), lo, hi)
		}
		t.Logf("managed=%v: %d bytes", managed, len(b))
	}
}
