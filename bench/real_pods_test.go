package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// The real-server memory benchmark's pods (BenchmarkRealMemory), written
// the way a cluster writes them: the ReplicaSet controller creates each pod
// from its template (field manager kube-controller-manager; the apiserver
// then adds its defaults, the service-account token volume and the default
// tolerations), the kubelet updates its status (kubelet, status
// subresource) and a third controller server-side applies a label and an
// annotation (topology-labeler). Every pod has a unique name, UID, IP,
// container IDs and timestamps; about ten pods share a template, a
// namespace holds realTemplatesPerNS templates, and the templates draw
// their containers from a catalogue of charts (realCharts), each deployed
// in many namespaces with its own version.

// realPodsPerNode places about this many pods on a node.
const realPodsPerNode = 30

// realTemplatesPerNS is the number of pod templates (ReplicaSets) in a
// namespace.
const realTemplatesPerNS = 10

// realBatch is the label that splits the pods (and ConfigMaps) into
// batches of realBatchSize, in the order written, so that a subject can
// list a prefix of the corpus with a label selector (the scale search).
const (
	realBatchLabel = "bench.listwatch.io/batch"
	realBatchSize  = 2500
)

// realChart is one application as a Helm chart would deploy it.
type realChart struct {
	name    string
	sidecar string // the second container: a proxy, a log shipper or an agent
	third   bool   // a third container (a metrics exporter)
	init    bool   // an init container
	cpu     string // the main container's CPU request
	mem     string // its memory request and limit
	port    int32
	java    bool // JVM options in the environment
}

var realCharts = func() []realChart {
	names := []string{"checkout", "cart", "payments", "catalog", "search", "recommend", "shipping", "inventory",
		"orders", "users", "auth", "notifications", "email", "ledger", "pricing", "reviews", "media", "gateway",
		"frontend", "admin", "reports", "billing", "fraud", "loyalty", "tax", "currency", "ads", "session",
		"feature-flags", "audit", "export", "import", "scheduler", "worker", "indexer", "cache-warmer"}
	sidecars := []string{"envoy", "fluent-bit", "otel-agent"}
	cpus := []string{"50m", "100m", "250m", "500m"}
	mems := []string{"128Mi", "256Mi", "512Mi", "1Gi"}
	out := make([]realChart, len(names))
	for i, n := range names {
		out[i] = realChart{name: n, sidecar: sidecars[i%3], third: i%3 == 1, init: i%4 == 0,
			cpu: cpus[i%4], mem: mems[(i/4)%4], port: int32(8080 + i%5), java: i%2 == 0}
	}
	return out
}()

// realTemplate is one ReplicaSet's pod template.
type realTemplate struct {
	t         int // index
	ns        string
	chart     realChart
	release   string // the Helm release (the chart's name in this namespace)
	version   string // the chart's app version
	hash      string // pod-template-hash
	rsUID     types.UID
	replicas  int
	firstNode int
}

// realTemplateOf returns template t; templates fill namespaces in order.
func realTemplateOf(t int) realTemplate {
	r := rand.New(rand.NewPCG(uint64(t), 0x7e3a))
	ch := realCharts[(t*7+t/realTemplatesPerNS)%len(realCharts)]
	return realTemplate{
		t: t, ns: "team-" + strconv.Itoa(t/realTemplatesPerNS), chart: ch, release: ch.name,
		version: fmt.Sprintf("1.%d.%d", t%7, t%3), hash: randomName(r, "bcdfghjklmnpqrstvwxz2456789", 10),
		rsUID: types.UID(uuidFrom(r)), replicas: 5 + (t*7)%11, firstNode: r.IntN(1 << 20),
	}
}

// realPodsOfTemplates returns the template and replica of every pod of a
// corpus of n pods: templates in order, each with its replicas.
func realPodsOfTemplates(n int) [][2]int {
	out := make([][2]int, 0, n)
	for t := 0; len(out) < n; t++ {
		tp := realTemplateOf(t)
		for r := 0; r < tp.replicas && len(out) < n; r++ {
			out = append(out, [2]int{t, r})
		}
	}
	return out
}

func randomName(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func uuidFrom(r *rand.Rand) string {
	const hex = "0123456789abcdef"
	b := []byte("xxxxxxxx-xxxx-4xxx-8xxx-xxxxxxxxxxxx")
	for i, c := range b {
		if c == 'x' {
			b[i] = hex[r.IntN(16)]
		}
	}
	return string(b)
}

// realPod is pod i of the corpus (replica rep of template tp), as the
// ReplicaSet controller creates it.
func realPod(tp realTemplate, rep, i int) *corev1.Pod {
	ch := tp.chart
	r := rand.New(rand.NewPCG(uint64(i), 0x9d1))
	rsName := tp.release + "-" + tp.hash
	labels := map[string]string{
		"app.kubernetes.io/name": ch.name, "app.kubernetes.io/instance": tp.release,
		"app.kubernetes.io/version": tp.version, "app.kubernetes.io/component": "server",
		"app.kubernetes.io/part-of": "shop", "app.kubernetes.io/managed-by": "Helm",
		"helm.sh/chart": ch.name + "-" + tp.version, "pod-template-hash": tp.hash,
		realBatchLabel: strconv.Itoa(i / realBatchSize),
	}
	annotations := map[string]string{
		"prometheus.io/scrape": "true", "prometheus.io/port": "9090", "prometheus.io/path": "/metrics",
		"checksum/config":                   fmt.Sprintf("%x", rand.New(rand.NewPCG(uint64(tp.t), 1)).Uint64()) + "9f2c4e1a7b3d5f60e8c2a4b6d8f0a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5",
		"kubectl.kubernetes.io/restartedAt": "2026-11-0" + strconv.Itoa(1+tp.t%9) + "T10:1" + strconv.Itoa(tp.t%10) + ":00Z",
	}
	node := "node-" + strconv.Itoa((tp.firstNode+rep*7919)%realNodes(i))
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: tp.ns, Name: rsName + "-" + randomName(r, "bcdfghjklmnpqrstvwxz2456789", 5), GenerateName: rsName + "-",
			Labels: labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rsName, UID: tp.rsUID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{
			NodeName:           node,
			ServiceAccountName: "default",
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(10001)),
				FSGroup: ptr.To(int64(10001)), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100,
					PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname",
						LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
							"app.kubernetes.io/name": ch.name, "app.kubernetes.io/instance": tp.release}}}}}}},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: tp.release + "-config"}}}},
				{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
			Containers: []corev1.Container{realMainContainer(tp), realSidecar(tp)},
		},
	}
	if ch.third {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{
			Name: "exporter", Image: "quay.io/prometheus/statsd-exporter:v0.28.0",
			Args:  []string{"--statsd.mapping-config=/etc/statsd/mapping.yaml", "--web.listen-address=:9102"},
			Ports: []corev1.ContainerPort{{Name: "exporter", ContainerPort: 9102, Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}},
			VolumeMounts:    []corev1.VolumeMount{{Name: "config", MountPath: "/etc/statsd", ReadOnly: true}},
			SecurityContext: realContainerSecurity(),
		})
	}
	if ch.init {
		p.Spec.InitContainers = []corev1.Container{{
			Name: "wait-for-db", Image: "busybox:1.37",
			Command: []string{"sh", "-c", "until nc -z " + tp.release + "-db." + tp.ns + ".svc.cluster.local 5432; do sleep 2; done"},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}},
			SecurityContext: realContainerSecurity(),
		}}
	}
	return p
}

// realNodes is the number of nodes the first i+1 pods are spread over.
func realNodes(i int) int { return max(10, (i+realPodsPerNode)/realPodsPerNode) }

func realContainerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
}

func realMainContainer(tp realTemplate) corev1.Container {
	ch := tp.chart
	env := []corev1.EnvVar{
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		{Name: "SERVICE_NAME", Value: ch.name},
		{Name: "LOG_LEVEL", Value: "info"},
		{Name: "HTTP_PORT", Value: strconv.Itoa(int(ch.port))},
		{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Value: "http://otel-collector.observability.svc.cluster.local:4317"},
		{Name: "OTEL_RESOURCE_ATTRIBUTES", Value: "service.name=" + ch.name + ",service.version=" + tp.version + ",deployment.environment=" + tp.ns},
		{Name: "DATABASE_URL", Value: "postgres://" + tp.release + "-db." + tp.ns + ".svc.cluster.local:5432/" + ch.name},
		{Name: "DATABASE_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: tp.release + "-db"}, Key: "password"}}},
		{Name: "FEATURE_FLAGS", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: tp.release + "-config"}, Key: "flags"}}},
	}
	if ch.java {
		env = append(env, corev1.EnvVar{Name: "JAVA_TOOL_OPTIONS", Value: "-XX:MaxRAMPercentage=75.0 -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -Dfile.encoding=UTF-8"})
	}
	probe := func(path string, delay int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}},
			InitialDelaySeconds: delay, PeriodSeconds: 10, TimeoutSeconds: 2, FailureThreshold: 3}
	}
	return corev1.Container{
		Name: ch.name, Image: "registry.example.com/shop/" + ch.name + ":" + tp.version,
		Args:  []string{"--config=/etc/" + ch.name + "/config.yaml", "--port=" + strconv.Itoa(int(ch.port))},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: ch.port, Protocol: corev1.ProtocolTCP}, {Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}},
		Env:   env,
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(ch.cpu), corev1.ResourceMemory: resource.MustParse(ch.mem)},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(ch.mem)}},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "config", MountPath: "/etc/" + ch.name, ReadOnly: true},
			{Name: "tmp", MountPath: "/tmp"},
		},
		LivenessProbe:   probe("/healthz", 10),
		ReadinessProbe:  probe("/readyz", 5),
		ImagePullPolicy: corev1.PullIfNotPresent,
		SecurityContext: realContainerSecurity(),
	}
}

func realSidecar(tp realTemplate) corev1.Container {
	c := corev1.Container{Name: tp.chart.sidecar, SecurityContext: realContainerSecurity(),
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}}
	switch tp.chart.sidecar {
	case "envoy":
		c.Image = "envoyproxy/envoy:v1.36.2"
		c.Args = []string{"-c", "/etc/envoy/envoy.yaml", "--service-cluster", tp.chart.name, "--service-node", "$(POD_NAME)"}
		c.Env = []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
		c.Ports = []corev1.ContainerPort{{Name: "envoy-admin", ContainerPort: 9901, Protocol: corev1.ProtocolTCP}}
		c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt(9901)}}, PeriodSeconds: 5}
	case "fluent-bit":
		c.Image = "cr.fluentbit.io/fluent/fluent-bit:4.1.1"
		c.Env = []corev1.EnvVar{{Name: "FLUENT_ELASTICSEARCH_HOST", Value: "logs.observability.svc.cluster.local"}, {Name: "FLUENT_ELASTICSEARCH_PORT", Value: "9200"}}
		c.VolumeMounts = []corev1.VolumeMount{{Name: "tmp", MountPath: "/var/log/app", ReadOnly: true}}
	default:
		c.Image = "otel/opentelemetry-collector-contrib:0.139.0"
		c.Args = []string{"--config=/etc/otel/agent.yaml"}
		c.Env = []corev1.EnvVar{{Name: "K8S_NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			{Name: "GOMEMLIMIT", Value: "100MiB"}}
		c.Ports = []corev1.ContainerPort{{Name: "otlp-grpc", ContainerPort: 4317, Protocol: corev1.ProtocolTCP}}
	}
	return c
}

// realPodStatus is what the kubelet reports for a running pod: its IPs,
// conditions, and a status per container with its ID, image ID, mounts,
// resources and start time.
func realPodStatus(p *corev1.Pod, i int, now time.Time) corev1.PodStatus {
	r := rand.New(rand.NewPCG(uint64(i), 0x5a7))
	start := metav1.NewTime(now.Add(-time.Duration(r.IntN(86400)) * time.Second).Truncate(time.Second))
	at := func(s int) metav1.Time { return metav1.NewTime(start.Add(time.Duration(s) * time.Second)) }
	node := 0
	fmt.Sscanf(p.Spec.NodeName, "node-%d", &node)
	hostIP := fmt.Sprintf("10.%d.%d.%d", 16+node>>16, node>>8&255, node&255)
	podIP := fmt.Sprintf("10.%d.%d.%d", 64+i>>16, i>>8&255, i&255)
	st := corev1.PodStatus{
		Phase: corev1.PodRunning, HostIP: hostIP, HostIPs: []corev1.HostIP{{IP: hostIP}},
		PodIP: podIP, PodIPs: []corev1.PodIP{{IP: podIP}}, StartTime: &start,
		Conditions: []corev1.PodCondition{
			{Type: "PodReadyToStartContainers", Status: corev1.ConditionTrue, LastTransitionTime: at(2)},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at(3)},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(14)},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at(14)},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(0)},
		},
	}
	status := func(c corev1.Container, started int) corev1.ContainerStatus {
		cs := corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image + "@sha256:" + fmt.Sprintf("%016x", rand.New(rand.NewPCG(uint64(len(c.Image)), uint64(c.Image[len(c.Image)-1]))).Uint64()) + "3c1f2e4d5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b",
			ContainerID: "containerd://" + fmt.Sprintf("%016x%016x%016x%016x", r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()),
			Ready:       true, Started: ptr.To(true),
			State:     corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(started)}},
			Resources: &corev1.ResourceRequirements{Requests: c.Resources.Requests, Limits: c.Resources.Limits},
		}
		for _, m := range c.VolumeMounts {
			cs.VolumeMounts = append(cs.VolumeMounts, corev1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly,
				RecursiveReadOnly: ptr.To(corev1.RecursiveReadOnlyDisabled)})
		}
		return cs
	}
	for _, c := range p.Spec.InitContainers {
		cs := status(c, 2)
		cs.Ready, cs.Started = false, ptr.To(false)
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed",
			StartedAt: at(2), FinishedAt: at(3), ContainerID: cs.ContainerID}}
		st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
	}
	for j, c := range p.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, status(c, 4+j))
	}
	return st
}

// writeRealPod creates pod i as the three managers would write it.
func writeRealPod(ctx context.Context, cs kubernetes.Interface, tp realTemplate, rep, i int, now time.Time) error {
	pods := cs.CoreV1().Pods(tp.ns)
	p, err := pods.Create(ctx, realPod(tp, rep, i), metav1.CreateOptions{FieldManager: "kube-controller-manager"})
	if err != nil {
		return fmt.Errorf("creating pod %d: %w", i, err)
	}
	p.Status = realPodStatus(p, i, now)
	if p, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{FieldManager: "kubelet"}); err != nil {
		return fmt.Errorf("updating the status of pod %d: %w", i, err)
	}
	zone := "zone-" + string(rune('a'+i%3))
	ac := corev1ac.Pod(p.Name, p.Namespace).
		WithLabels(map[string]string{"topology.kubernetes.io/zone": zone}).
		WithAnnotations(map[string]string{"topology.example.com/placed": p.Spec.NodeName + "/" + zone})
	if _, err := pods.Apply(ctx, ac, metav1.ApplyOptions{FieldManager: "topology-labeler", Force: true}); err != nil {
		return fmt.Errorf("applying to pod %d: %w", i, err)
	}
	return nil
}
