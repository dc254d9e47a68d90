package bench

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestRealSecretsCorpus checks that the Secrets of BenchmarkRealMemory
// (real_secrets_test.go) are deterministic, uniquely named and that
// Helm's payloads are base64 of gzipped JSON, and logs what the corpus
// holds: data bytes per type, and how many of them are values repeated
// across objects (which a cache could hold once). BENCH_SECRETS_N (100:
// two namespaces, every type of Secret; under -race gzip is slow) sets
// its size: 20000 describes the benchmark's corpus (a few seconds
// without -race).
func TestRealSecretsCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the corpus twice")
	}
	n := 100
	if v := os.Getenv("BENCH_SECRETS_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	a, b := realSecrets(n), realSecrets(n)
	names := map[string]bool{}
	type stat struct{ objs, data, json, min, max int }
	byType := map[corev1.SecretType]*stat{}
	count := map[string]int{} // data value → objects holding it
	total := stat{}
	for i, s := range a {
		if !equalSecret(s.s, b[i].s) {
			t.Fatalf("secret %d (%s/%s) differs between two builds", i, s.s.Namespace, s.s.Name)
		}
		key := s.s.Namespace + "/" + s.s.Name
		if names[key] {
			t.Fatalf("secret %s twice", key)
		}
		names[key] = true
		raw, err := json.Marshal(s.s)
		if err != nil {
			t.Fatal(err)
		}
		st := byType[s.s.Type]
		if st == nil {
			st = &stat{}
			byType[s.s.Type] = st
		}
		size := 0
		for _, v := range s.s.Data {
			size += len(v)
		}
		if st.objs == 0 || size < st.min {
			st.min = size
		}
		st.max = max(st.max, size)
		st.objs++
		st.json += len(raw)
		total.objs++
		total.json += len(raw)
		for _, v := range s.s.Data {
			st.data += len(v)
			total.data += len(v)
			count[string(v)]++
		}
		if s.s.Type == "helm.sh/release.v1" {
			checkHelmRelease(t, s.s.Data["release"])
		}
	}
	shared, saved := 0, 0
	for v, c := range count {
		if c > 1 {
			shared += c * len(v)
			saved += (c - 1) * len(v)
		}
	}
	for typ, st := range byType {
		t.Logf("%-32s %6d objects, data %7.0f B/obj (%d to %d), %7.0f B/obj as JSON", typ, st.objs,
			float64(st.data)/float64(st.objs), st.min, st.max, float64(st.json)/float64(st.objs))
	}
	t.Logf("%d secrets: %.1f MB of data (%.0f B/obj), %.1f MB as JSON; values held by more than one object: %.1f%% of the data bytes (%.0f B/obj), a dedup would save %.1f%% (%.0f B/obj)",
		total.objs, float64(total.data)/1e6, float64(total.data)/float64(n), float64(total.json)/1e6,
		100*float64(shared)/float64(total.data), float64(shared)/float64(n), 100*float64(saved)/float64(total.data), float64(saved)/float64(n))
}

func equalSecret(x, y *corev1.Secret) bool {
	a, _ := json.Marshal(x)
	b, _ := json.Marshal(y)
	return bytes.Equal(a, b)
}

// checkHelmRelease fails unless v is base64 of a gzipped JSON object.
func checkHelmRelease(t *testing.T, v []byte) {
	gz, err := base64.StdEncoding.DecodeString(string(v))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var rel map[string]any
	if err := json.Unmarshal(raw, &rel); err != nil || rel["manifest"] == nil {
		t.Fatalf("not a release: %v", err)
	}
}
