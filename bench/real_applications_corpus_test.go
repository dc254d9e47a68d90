package bench

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestRealApplicationsCorpus: the Applications corpus is the same in every
// run, every object round-trips through JSON as its Go type (what both
// caches decode it into), carries the batch label the benchmark selects
// by, and is about as large as a busy Argo CD's Applications are (5–30 KB
// of JSON).
func TestRealApplicationsCorpus(t *testing.T) {
	a, b := realApplications(60), realApplications(60)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two builds of the corpus differ")
	}
	total := 0
	for _, ra := range a {
		app := *ra.app
		app.Status = ra.status
		raw, err := json.Marshal(&app)
		if err != nil {
			t.Fatal(err)
		}
		total += len(raw)
		var back application
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(json.RawMessage(mustJSON(t, &back)), json.RawMessage(raw)) {
			t.Fatalf("%s does not round-trip", app.Name)
		}
		if app.Labels[realBatchLabel] == "" || app.Namespace != applicationsNS {
			t.Fatalf("%s: labels %v, namespace %q", app.Name, app.Labels, app.Namespace)
		}
	}
	if avg := total / len(a); avg < 5000 || avg > 30000 {
		t.Fatalf("%d bytes of JSON per Application, want 5–30 KB", avg)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
