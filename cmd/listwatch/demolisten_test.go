package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/informer/statuspage"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// demo --listen serves the status page and /metrics while it runs, and
// both describe its informer. Real time (a network listener keeps virtual
// time from advancing): about two seconds.
func TestDemoListenServesStatusAndMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("real time")
	}
	var out lockedBuffer
	var errOut strings.Builder
	done := make(chan int)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		done <- run(ctx, []string{"demo", "--duration", "2s", "--objects", "50", "--rate", "20", "--faults=false",
			"--listen", "127.0.0.1:0"}, &out, &errOut)
	}()
	if !out.waitFor("starting the controller", 20*time.Second) {
		cancel()
		t.Fatalf("demo did not sync; stdout:\n%s", out.String())
	}
	m := regexp.MustCompile(`status page (http://127\.0\.0\.1:\d+/)`).FindStringSubmatch(out.String())
	if m == nil {
		cancel()
		<-done
		t.Fatalf("no status page address in:\n%s", out.String())
	}
	base := m[1]
	fetch := func(url string) (string, string) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", url, resp.Status)
		}
		return resp.Header.Get("Content-Type"), string(body)
	}
	_, body := fetch(base + "?format=json")
	var rep statuspage.Report
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Informers) != 1 || rep.Informers[0].Name != "configmaps" || !rep.Informers[0].Synced ||
		rep.Informers[0].Objects < 50 || len(rep.Informers[0].Handlers) != 3 || rep.Informers[0].Relists["None"] != 1 {
		t.Errorf("status = %s", body)
	}
	if ct, page := fetch(base); !strings.HasPrefix(ct, "text/html") || !strings.Contains(page, `id="informer-configmaps"`) {
		t.Errorf("page (%s) lacks the informer's row:\n%s", ct, page)
	}
	_, text := fetch(base + "metrics")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"informer_cache_objects", "informer_handler_pending", "informer_reflector_relists_total",
		"workqueue_depth", "workqueue_adds_total", "workqueue_work_duration_seconds", "go_goroutines"} {
		if mfs[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "cache equals server: OK") {
		t.Errorf("stdout:\n%s", out.String())
	}
}

func TestDemoListenRefusesABadAddress(t *testing.T) {
	r := runArgs(t.Context(), "demo", "--duration", "1s", "--objects", "1", "--listen", "256.0.0.1:bad")
	if r.code == 0 || !strings.Contains(r.stderr+r.stdout, "--listen") {
		t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
