package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
)

// The real-server benchmark's second kind: ConfigMaps with large data, as
// the namespaces of realTemplateOf's releases hold them. Each namespace
// has the cluster's kube-root-ca.crt (the same certificate everywhere,
// written by kube-controller-manager), and each release (template) two
// ConfigMaps written by Helm (field manager helm) and then server-side
// applied by a GitOps controller (argocd-controller, one label and one
// annotation):
//
//   - <release>-config: config.yaml (2 to 6 KB, rendered with the release's
//     namespace, so unique to it), logging.yaml (the chart's, the same in
//     every namespace that runs the chart at that version) and flags (a
//     small JSON document);
//   - <release>-env: a dozen short settings, mostly values that repeat
//     ("info", "true", ports), consumed with envFrom.
//
// So about a third of the data bytes repeat across objects (the
// certificate and the logging files), the rest is unique.

// realConfigMaps returns the n ConfigMaps of the corpus, in write order.
func realConfigMaps(n int) []*corev1.ConfigMap {
	out := make([]*corev1.ConfigMap, 0, n)
	for t := 0; len(out) < n; t++ {
		tp := realTemplateOf(t)
		if t%realTemplatesPerNS == 0 {
			out = append(out, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tp.ns, Name: "kube-root-ca.crt",
				Annotations: map[string]string{"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."}},
				Data: map[string]string{"ca.crt": realCACert}})
		}
		out = append(out, realConfigOf(tp), realEnvOf(tp))
	}
	out = out[:n]
	for i, cm := range out {
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		cm.Labels[realBatchLabel] = strconv.Itoa(i / realBatchSize)
	}
	return out
}

func realHelmLabels(tp realTemplate) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name": tp.chart.name, "app.kubernetes.io/instance": tp.release,
		"app.kubernetes.io/version": tp.version, "app.kubernetes.io/managed-by": "Helm",
		"helm.sh/chart": tp.chart.name + "-" + tp.version,
	}
}

func realConfigOf(tp realTemplate) *corev1.ConfigMap {
	ch := tp.chart
	r := rand.New(rand.NewPCG(uint64(tp.t), 0xc0f))
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "server:\n  port: %d\n  shutdownGracePeriod: 30s\n  readTimeout: 15s\n  writeTimeout: 15s\n", ch.port)
	fmt.Fprintf(&cfg, "service:\n  name: %s\n  version: %s\n  environment: %s\n", ch.name, tp.version, tp.ns)
	fmt.Fprintf(&cfg, "database:\n  host: %s-db.%s.svc.cluster.local\n  port: 5432\n  name: %s\n  pool:\n    maxOpen: %d\n    maxIdle: 5\n    maxLifetime: 30m\n", tp.release, tp.ns, ch.name, 10+r.IntN(40))
	fmt.Fprintf(&cfg, "cache:\n  address: redis-master.%s.svc.cluster.local:6379\n  ttl: %ds\n", tp.ns, 60*(1+r.IntN(30)))
	cfg.WriteString("upstreams:\n")
	for j := range 8 + r.IntN(40) {
		other := realCharts[(int(ch.port)+j*5)%len(realCharts)].name
		fmt.Fprintf(&cfg, "  - name: %s\n    url: http://%s.%s.svc.cluster.local:8080\n    timeout: %dms\n    retries: %d\n", other, other, tp.ns, 100*(1+r.IntN(20)), r.IntN(4))
	}
	logging := fmt.Sprintf("level: info\nformat: json\nsampling:\n  initial: 100\n  thereafter: 100\noutputs:\n  - stdout\nfields:\n  service: %s\n  version: %s\n", ch.name, tp.version) +
		strings.Repeat("# logging settings shipped with the "+ch.name+" chart; change them through values.yaml, not here.\n", 12)
	flags := fmt.Sprintf(`{"newCheckout":%t,"searchV2":%t,"darkLaunch":%t,"rolloutPercent":%d}`, r.IntN(2) == 0, r.IntN(2) == 0, r.IntN(2) == 0, 10*r.IntN(11))
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tp.ns, Name: tp.release + "-config", Labels: realHelmLabels(tp),
		Annotations: map[string]string{"meta.helm.sh/release-name": tp.release, "meta.helm.sh/release-namespace": tp.ns}},
		Data: map[string]string{"config.yaml": cfg.String(), "logging.yaml": logging, "flags": flags}}
}

func realEnvOf(tp realTemplate) *corev1.ConfigMap {
	r := rand.New(rand.NewPCG(uint64(tp.t), 0xe17))
	levels := []string{"info", "info", "info", "debug", "warn"}
	data := map[string]string{
		"LOG_LEVEL": levels[r.IntN(len(levels))], "LOG_FORMAT": "json", "HTTP_PORT": strconv.Itoa(int(tp.chart.port)),
		"METRICS_PORT": "9090", "ENABLE_TRACING": "true", "TRACING_SAMPLE_RATE": "0.1", "GRACEFUL_SHUTDOWN": "30s",
		"CACHE_ENABLED": strconv.FormatBool(r.IntN(3) > 0), "REGION": "eu-west-1", "TZ": "UTC",
		"MAX_REQUEST_SIZE": "10MB", "RATE_LIMIT_RPS": strconv.Itoa(100 * (1 + r.IntN(10))),
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tp.ns, Name: tp.release + "-env", Labels: realHelmLabels(tp),
		Annotations: map[string]string{"meta.helm.sh/release-name": tp.release, "meta.helm.sh/release-namespace": tp.ns}},
		Data: data}
}

// writeRealConfigMap creates cm as Helm would (kube-root-ca.crt as
// kube-controller-manager), then, for a release's ConfigMaps, applies a
// GitOps controller's label and annotation.
func writeRealConfigMap(ctx context.Context, cs kubernetes.Interface, cm *corev1.ConfigMap, i int) error {
	cms := cs.CoreV1().ConfigMaps(cm.Namespace)
	manager := "helm"
	if cm.Name == "kube-root-ca.crt" {
		manager = "kube-controller-manager"
	}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{FieldManager: manager}); err != nil {
		return fmt.Errorf("creating configmap %d: %w", i, err)
	}
	if manager != "helm" {
		return nil
	}
	ac := corev1ac.ConfigMap(cm.Name, cm.Namespace).
		WithLabels(map[string]string{"argocd.argoproj.io/instance": cm.Namespace + "-" + cm.Labels["app.kubernetes.io/instance"]}).
		WithAnnotations(map[string]string{"argocd.argoproj.io/tracking-id": cm.Namespace + ":/ConfigMap:" + cm.Namespace + "/" + cm.Name})
	if _, err := cms.Apply(ctx, ac, metav1.ApplyOptions{FieldManager: "argocd-controller", Force: true}); err != nil {
		return fmt.Errorf("applying to configmap %d: %w", i, err)
	}
	return nil
}

// realCACert is a cluster CA certificate as kube-root-ca.crt carries it
// (the same bytes in every namespace).
var realCACert = "-----BEGIN CERTIFICATE-----\n" + strings.Repeat("MIIDBTCCAe2gAwIBAgIIQm8tZ2VuZXJhdGVkLWZvci10aGUtYmVuY2htYXJrMA0G\n", 16) +
	"CSqGSIb3DQEBCwUAMBUxEzARBgNVBAMTCmt1YmVybmV0ZXM=\n-----END CERTIFICATE-----\n"
