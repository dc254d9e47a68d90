package kcm

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// Size is the cluster the harness writes: what a cluster's users write
// (namespaces with their workloads, configuration and policies); the
// controller manager writes the rest (ReplicaSets, Pods, EndpointSlices,
// Jobs of CronJobs, service accounts, root CA ConfigMaps, quota usage).
type Size struct {
	Nodes      int
	Namespaces int
	// Deployments per namespace, each with Replicas pods, a Service
	// selecting them and a PodDisruptionBudget.
	Deployments int
	Replicas    int
	// StatefulSets per namespace (3 pods each, no volume claims).
	StatefulSets int
	// ConfigMaps and Secrets per namespace (Helm-style releases: a config
	// file, an environment, a TLS certificate, a registry credential).
	ConfigMaps, Secrets int
	// Jobs per namespace, each with Completions pods; one CronJob per
	// namespace when CronJobs.
	Jobs, Completions int
	CronJobs          bool
}

// Pods returns the number of pods the controllers create for s (CronJobs
// aside).
func (s Size) Pods() int {
	return s.Namespaces * (s.Deployments*s.Replicas + s.StatefulSets*3 + s.Jobs*s.Completions)
}

// Small is the size make test runs: a few hundred pods.
var Small = Size{Nodes: 5, Namespaces: 3, Deployments: 6, Replicas: 12, StatefulSets: 1, ConfigMaps: 8, Secrets: 6, Jobs: 2, Completions: 3, CronJobs: true}

// Full is the benchmark's size: 20,160 pods over 100 nodes.
var Full = Size{Nodes: 100, Namespaces: 40, Deployments: 24, Replicas: 20, StatefulSets: 2, ConfigMaps: 40, Secrets: 30, Jobs: 3, Completions: 4, CronJobs: true}

// Namespace returns the name of namespace i.
func Namespace(i int) string { return fmt.Sprintf("team-%02d", i) }

// write creates the whole cluster through cs: nodes (Ready, with Leases
// the harness then renews), namespaces and their objects.
func write(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, s Size) error {
	for i := range s.Nodes {
		if err := createNode(ctx, cs, i); err != nil {
			return err
		}
	}
	for n := range s.Namespaces {
		if err := writeNamespace(ctx, cs, dyn, s, n); err != nil {
			return err
		}
	}
	return nil
}

func writeNamespace(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, s Size, n int) error {
	ns := Namespace(n)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
		Labels: map[string]string{"team": ns, "env": "prod"}}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	// Two quotas, as a platform team writes them: object counts, and
	// compute for the pods that do not terminate by themselves (a
	// CronJob's pods have a deadline, so they come and go with the clock
	// without moving the compute quota that the runs compare).
	counts := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "quota", Namespace: ns},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			"count/configmaps": resource.MustParse("10000"), "count/secrets": resource.MustParse("10000"),
			"services": resource.MustParse("1000"), "count/deployments.apps": resource.MustParse("1000"),
			"count/jobs.batch": resource.MustParse("1000"),
		}}}
	compute := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "compute", Namespace: ns},
		Spec: corev1.ResourceQuotaSpec{Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating},
			Hard: corev1.ResourceList{
				"pods": resource.MustParse("10000"), "requests.cpu": resource.MustParse("1000"), "requests.memory": resource.MustParse("10Ti"),
			}}}
	for _, q := range []*corev1.ResourceQuota{counts, compute} {
		if _, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for i := range s.ConfigMaps {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap(ns, i), metav1.CreateOptions{FieldManager: "helm"}); err != nil {
			return err
		}
	}
	for i := range s.Secrets {
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret(ns, i), metav1.CreateOptions{FieldManager: "helm"}); err != nil {
			return err
		}
	}
	for i := range s.Deployments {
		app := fmt.Sprintf("app-%02d", i)
		if _, err := cs.CoreV1().Services(ns).Create(ctx, service(ns, app), metav1.CreateOptions{FieldManager: "helm"}); err != nil {
			return err
		}
		d, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment(ns, app, i, s.Replicas), metav1.CreateOptions{FieldManager: "helm"})
		if err != nil {
			return err
		}
		// An operator's custom resource that the Deployment owns: the
		// garbage collector follows it through a metadata-only informer.
		if _, err := dyn.Resource(Widgets).Namespace(ns).Create(ctx, widget(d), metav1.CreateOptions{FieldManager: "operator"}); err != nil {
			return err
		}
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromString("50%")),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": app}}}}
		if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{FieldManager: "helm"}); err != nil {
			return err
		}
	}
	for i := range s.StatefulSets {
		name := fmt.Sprintf("db-%d", i)
		if _, err := cs.CoreV1().Services(ns).Create(ctx, headless(ns, name), metav1.CreateOptions{FieldManager: "helm"}); err != nil {
			return err
		}
		if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, statefulSet(ns, name, i), metav1.CreateOptions{FieldManager: "helm"}); err != nil {
			return err
		}
	}
	for i := range s.Jobs {
		if _, err := cs.BatchV1().Jobs(ns).Create(ctx, job(ns, fmt.Sprintf("migrate-%d", i), s.Completions), metav1.CreateOptions{FieldManager: "helm"}); err != nil {
			return err
		}
	}
	if s.CronJobs {
		cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "report", Namespace: ns},
			Spec: batchv1.CronJobSpec{Schedule: "*/1 * * * *", ConcurrencyPolicy: batchv1.ForbidConcurrent,
				SuccessfulJobsHistoryLimit: ptr.To[int32](1), FailedJobsHistoryLimit: ptr.To[int32](1),
				JobTemplate: batchv1.JobTemplateSpec{Spec: job(ns, "report", 1).Spec}}}
		cj.Spec.JobTemplate.Spec.Selector, cj.Spec.JobTemplate.Spec.Template.Labels = nil, map[string]string{"app.kubernetes.io/name": "report"}
		cj.Spec.JobTemplate.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](3600) // outside the compute quota
		if _, err := cs.BatchV1().CronJobs(ns).Create(ctx, cj, metav1.CreateOptions{FieldManager: "helm"}); err != nil {
			return err
		}
	}
	return nil
}

// Widgets is the custom resource the harness installs: an operator's, of
// which each Deployment owns one.
var Widgets = schema.GroupVersionResource{Group: "example.listwatch.io", Version: "v1", Resource: "widgets"}

func widget(owner *appsv1.Deployment) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.listwatch.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": owner.Name, "namespace": owner.Namespace, "labels": map[string]any{"app.kubernetes.io/name": owner.Name},
			"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": owner.Name, "uid": string(owner.UID),
				"controller": true, "blockOwnerDeletion": true}}},
		"spec": map[string]any{"size": int64(3), "color": "blue", "tags": []any{"a", "b"}},
	}}
}

func labels(app string) map[string]string {
	return map[string]string{"app.kubernetes.io/name": app, "app.kubernetes.io/instance": app + "-release",
		"app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": app + "-1.4.2"}
}

func configMap(ns string, i int) *corev1.ConfigMap {
	app := fmt.Sprintf("app-%02d", i%12)
	data := map[string]string{}
	if i%2 == 0 {
		conf := ""
		for k := range 40 {
			conf += fmt.Sprintf("  setting_%02d: value-%d-%s\n", k, k*i, ns)
		}
		data["config.yaml"] = "server:\n  port: 8080\n  namespace: " + ns + "\n" + conf
		data["logging.yaml"] = "level: info\nformat: json\n"
	} else {
		for k := range 12 {
			data[fmt.Sprintf("ENV_%02d", k)] = fmt.Sprintf("%s-%d", app, k)
		}
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-config-%d", app, i), Namespace: ns, Labels: labels(app),
		Annotations: map[string]string{"meta.helm.sh/release-name": app + "-release", "meta.helm.sh/release-namespace": ns}}, Data: data}
}

func secret(ns string, i int) *corev1.Secret {
	app := fmt.Sprintf("app-%02d", i%12)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-secret-%d", app, i), Namespace: ns, Labels: labels(app)}}
	switch i % 3 {
	case 0:
		s.Type = corev1.SecretTypeTLS
		s.Data = map[string][]byte{"tls.crt": fmt.Appendf(nil, "-----BEGIN CERTIFICATE-----\n%0900d\n-----END CERTIFICATE-----\n", i),
			"tls.key": fmt.Appendf(nil, "-----BEGIN PRIVATE KEY-----\n%0300d\n-----END PRIVATE KEY-----\n", i)}
	case 1:
		s.Type = corev1.SecretTypeDockerConfigJson
		s.Data = map[string][]byte{".dockerconfigjson": []byte(`{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNzd29yZA=="}}}`)}
	default:
		s.Type = corev1.SecretTypeOpaque
		s.Data = map[string][]byte{"password": fmt.Appendf(nil, "p-%s-%d", ns, i), "username": []byte("app")}
	}
	return s
}

func service(ns, app string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns, Labels: labels(app)},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app.kubernetes.io/name": app},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}}}
}

func headless(ns, name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels(name)},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app.kubernetes.io/name": name},
			Ports: []corev1.ServicePort{{Name: "sql", Port: 5432}}}}
}

// podSpec is a realistic pod template: an application container with
// environment, resources, probes and mounts, and a sidecar.
func podSpec(app string, i int) corev1.PodTemplateSpec {
	env := []corev1.EnvVar{{Name: "APP", Value: app}, {Name: "LOG_LEVEL", Value: "info"},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}
	for k := range 8 {
		env = append(env, corev1.EnvVar{Name: fmt.Sprintf("FEATURE_%d", k), Value: fmt.Sprint(k%2 == 0)})
	}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
		PeriodSeconds: 10, FailureThreshold: 3}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels(app), Annotations: map[string]string{"checksum/config": fmt.Sprintf("%064x", i+1)}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "app", Image: fmt.Sprintf("registry.example.com/%s:1.%d.0", app, i%7), Env: env,
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "metrics", ContainerPort: 9090}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}},
				ReadinessProbe: probe, LivenessProbe: probe,
				VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}},
			}, {
				Name: "proxy", Image: "registry.example.com/proxy:2.1.3", Args: []string{"--listen=:15001", "--upstream=127.0.0.1:8080"},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")}},
			}},
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: fmt.Sprintf("%s-config-%d", app, i)}}}}},
			Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "apps", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
}

func deployment(ns, app string, i, replicas int) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns, Labels: labels(app)},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": app}},
			Template: podSpec(app, i)}}
}

func statefulSet(ns, name string, i int) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels(name)},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), ServiceName: name,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": name}},
			Template: podSpec(name, i)}}
}

func job(ns, name string, completions int) *batchv1.Job {
	tpl := podSpec(name, 0)
	tpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	tpl.Spec.Containers = tpl.Spec.Containers[:1]
	tpl.Spec.Containers[0].ReadinessProbe, tpl.Spec.Containers[0].LivenessProbe = nil, nil
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels(name)},
		Spec: batchv1.JobSpec{Completions: ptr.To(int32(completions)), Parallelism: ptr.To(int32(completions)), Template: tpl}}
}
