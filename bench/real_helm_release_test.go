package bench

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// The payload of a Helm release Secret (real_secrets_test.go): Helm 3's
// secrets driver stores a release as base64(gzip(json(release))) in
// data.release, the JSON holding the chart (metadata, every template
// base64-encoded, the default values), the user's values, the rendered
// manifest and the release's info. The chart's part is the same for every
// release of that chart (realChartFiles); the manifest is rendered with
// the release's namespace, revision, image tag and checksums, so the
// compressed stream, and the Secret's bytes, are unique per release and
// revision. Charts differ in size (realChartFiles: 4 to 26 templates), so
// data.release is about 4 to 20 KB.

// realChartFile is one file of a chart: a template or values.yaml.
type realChartFile struct {
	Name string `json:"name"`
	Data []byte `json:"data"` // base64 in JSON, as Helm's chart.File
}

// realChartFiles returns chart c's templates and values.yaml, built once
// per chart (seeded by its index, as its text is the same in every
// namespace).
var realChartFiles = func() func(c int) []realChartFile {
	var mu sync.Mutex
	cache := map[int][]realChartFile{}
	return func(c int) []realChartFile {
		mu.Lock()
		defer mu.Unlock()
		if f, ok := cache[c]; ok {
			return f
		}
		r := rand.New(rand.NewPCG(uint64(c), 0x4e1))
		name := realCharts[c].name
		kinds := []string{"deployment", "service", "configmap", "serviceaccount", "hpa", "ingress", "pdb",
			"servicemonitor", "networkpolicy", "role", "rolebinding", "job-migrate", "cronjob", "secret"}
		var files []realChartFile
		for i := range 4 + (c*5)%23 {
			var t strings.Builder
			fmt.Fprintf(&t, "{{- if .Values.%s.enabled }}\napiVersion: v1\nkind: %s\nmetadata:\n  name: {{ include \"%s.fullname\" . }}-%d\n  labels:\n    {{- include \"%s.labels\" . | nindent 4 }}\nspec:\n",
				kinds[i%len(kinds)], kinds[i%len(kinds)], name, i, name)
			for range 12 + r.IntN(30) {
				fmt.Fprintf(&t, "  %s%s: {{ .Values.%s.%s%d | default %q }}\n", strings.Repeat("  ", r.IntN(4)),
					realWords[r.IntN(len(realWords))], kinds[i%len(kinds)], realWords[r.IntN(len(realWords))], r.IntN(100), realWords[r.IntN(len(realWords))])
			}
			t.WriteString("{{- end }}\n")
			files = append(files, realChartFile{Name: "templates/" + kinds[i%len(kinds)] + fmt.Sprint(i) + ".yaml", Data: []byte(t.String())})
		}
		var v strings.Builder
		fmt.Fprintf(&v, "# Default values for %s.\nreplicaCount: 1\nimage:\n  repository: registry.example.com/%s\n  pullPolicy: IfNotPresent\n", name, name)
		for range 20 + (c*3)%40 {
			fmt.Fprintf(&v, "%s:\n  enabled: %t\n  %s: %q\n", realWords[r.IntN(len(realWords))], r.IntN(2) == 0, realWords[r.IntN(len(realWords))], realWords[r.IntN(len(realWords))])
		}
		files = append(files, realChartFile{Name: "values.yaml", Data: []byte(v.String())})
		cache[c] = files
		return files
	}
}()

var realWords = strings.Fields("resources limits requests cpu memory replicas port targetPort protocol path host " +
	"timeout retries interval enabled annotations labels selector affinity tolerations nodeSelector image tag " +
	"pullPolicy serviceAccount create name podSecurityContext securityContext runAsUser fsGroup readOnly " +
	"livenessProbe readinessProbe initialDelaySeconds periodSeconds metrics serviceMonitor autoscaling " +
	"minReplicas maxReplicas targetCPUUtilizationPercentage ingress className tls secretName hosts paths")

// realHelmRelease returns data.release of release tp at revision rev with
// status (deployed or superseded), as
// Helm's secrets driver writes it: base64 text of the gzipped JSON.
func realHelmRelease(tp realTemplate, rev int, status string, at time.Time) []byte {
	c := 0
	for i, ch := range realCharts {
		if ch.name == tp.chart.name {
			c = i
		}
	}
	r := rand.New(rand.NewPCG(uint64(tp.t)<<8|uint64(rev), 0x4e2))
	files := realChartFiles(c)
	var manifest strings.Builder
	for _, f := range files[:len(files)-1] {
		sum := sha256.Sum256(fmt.Appendf(nil, "%s/%s/%d/%s", tp.ns, tp.release, rev, f.Name))
		fmt.Fprintf(&manifest, "---\n# Source: %s/%s\napiVersion: v1\nkind: Object\nmetadata:\n  name: %s\n  namespace: %s\n  labels:\n    app.kubernetes.io/instance: %s\n    helm.sh/chart: %s-%s\n  annotations:\n    checksum/config: %s\nspec:\n  replicas: %d\n  image: registry.example.com/%s:%s-%x\n",
			tp.chart.name, f.Name, tp.release, tp.ns, tp.release, tp.chart.name, tp.version, hex.EncodeToString(sum[:]), 1+r.IntN(5), tp.chart.name, tp.version, r.Uint32())
		for range 4 + r.IntN(12) {
			fmt.Fprintf(&manifest, "  %s: %s-%d\n", realWords[r.IntN(len(realWords))], realWords[r.IntN(len(realWords))], r.IntN(10000))
		}
	}
	desc := "Upgrade complete"
	if rev == 1 {
		desc = "Install complete"
	}
	rel := map[string]any{
		"name": tp.release, "namespace": tp.ns, "version": rev,
		"info": map[string]any{"first_deployed": at.Add(-time.Duration(rev) * time.Hour).Format(time.RFC3339Nano),
			"last_deployed": at.Format(time.RFC3339Nano), "deleted": "", "description": desc, "status": status,
			"notes": "1. Get the application URL by running these commands:\n  kubectl --namespace " + tp.ns + " port-forward svc/" + tp.release + " 8080:80\n"},
		"chart": map[string]any{
			"metadata":  map[string]any{"name": tp.chart.name, "version": tp.version, "appVersion": tp.version, "apiVersion": "v2", "type": "application", "description": "A Helm chart for " + tp.chart.name},
			"templates": files[:len(files)-1], "files": files[len(files)-1:], "values": map[string]any{"replicaCount": 1},
			"schema": nil, "lock": nil,
		},
		"config":   map[string]any{"image": map[string]any{"tag": fmt.Sprintf("%s-%x", tp.version, r.Uint32())}, "replicaCount": 1 + r.IntN(5)},
		"manifest": manifest.String(),
		"hooks":    []any{},
	}
	raw, err := json.Marshal(rel)
	if err != nil {
		panic(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write(raw)
	_ = w.Close()
	return []byte(base64.StdEncoding.EncodeToString(gz.Bytes()))
}
