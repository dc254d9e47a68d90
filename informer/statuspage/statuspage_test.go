package statuspage

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/factory"
	"github.com/listwatch/listwatch/reflector"
)

// statusFixture starts a factory with a synced configmaps informer whose
// second handler is stuck, and a pods informer whose requests are
// forbidden. Call the returned function to unblock the stuck handler.
func statusFixture(t *testing.T) (*factory.Factory, func()) {
	srv := fake.NewTestServer(t, fake.Options{})
	for _, name := range []string{"a", "b"} {
		srv.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}})
	}
	podGVR := fake.Pods().GVR
	if err := srv.FailNext(fake.Failure{Resource: podGVR, Times: 1000, Kind: fake.Forbidden}); err != nil {
		t.Fatal(err)
	}
	f := factory.New(factory.Options{})
	t.Cleanup(f.Shutdown)
	cmGVR := fake.ConfigMaps().GVR
	cms, err := factory.For(f, cmGVR.String(), factory.Selection{}, func(factory.Selection) cache.ListerWatcherWithContext {
		return srv.ListerWatcher(fake.LWOptions{Resource: cmGVR})
	}, informer.Options[*corev1.ConfigMap]{Name: "configmaps"})
	if err != nil {
		t.Fatal(err)
	}
	cms.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{}, informer.HandlerOptions{})
	block := make(chan struct{})
	cms.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(*corev1.ConfigMap, bool) { <-block }}, informer.HandlerOptions{})
	_, err = factory.For(f, podGVR.String(), factory.Selection{Namespace: "team-a"}, func(s factory.Selection) cache.ListerWatcherWithContext {
		return srv.ListerWatcher(fake.LWOptions{Resource: podGVR, Namespace: s.Namespace})
	}, informer.Options[*corev1.Pod]{Name: "pods <team-a>"})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(klog.NewContext(t.Context(), logr.Discard()))
	if err := cms.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // fake time: ages the stuck handler's backlog
	synctest.Wait()
	return f, func() { close(block) }
}

func get(t *testing.T, h http.Handler, target, accept string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Result(), string(body)
}

func TestStatusHandlerJSON(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, unblock := statusFixture(t)
		defer unblock()
		h := Handler(f, Options{Relists: func(name string) map[string]int64 {
			return map[string]int64{"None": int64(len(name))}
		}})
		for _, r := range []struct{ target, accept string }{{"/?format=json", ""}, {"/", "application/json"}} {
			resp, body := get(t, h, r.target, r.accept)
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("%v: content type %q", r, ct)
			}
			var rep Report
			if err := json.Unmarshal([]byte(body), &rep); err != nil {
				t.Fatal(err)
			}
			if len(rep.Informers) != 2 {
				t.Fatalf("informers = %+v", rep.Informers)
			}
			cms, pods := rep.Informers[0], rep.Informers[1]
			if cms.ID != "configmaps" || !cms.Healthy || !cms.Synced || cms.Status.Phase != reflector.PhaseWatching || cms.Objects != 2 ||
				cms.Status.LastSyncResourceVersion == "" || cms.Relists["None"] != int64(len("configmaps")) || len(cms.Handlers) != 2 ||
				cms.Resource != "v1/configmaps" {
				t.Errorf("configmaps = %+v", cms)
			}
			if hs := cms.Handlers[1]; hs.Stats.Pending != 1 || hs.Stats.OldestPending != 3*time.Second || hs.Stats.Busy != 3*time.Second ||
				hs.Stats.Processed != 0 || hs.Synced {
				t.Errorf("stuck handler = %+v", hs)
			}
			if pods.ID != "pods-team-a" || pods.Healthy || pods.Synced || pods.Status.Phase != reflector.PhaseBackoff ||
				pods.Status.Reason != reflector.ReasonForbidden || pods.Status.LastError == nil ||
				!strings.Contains(pods.Status.LastError.Error(), "forbidden") || pods.Status.Failures < 1 || pods.Namespace != "team-a" {
				t.Errorf("pods = %+v", pods)
			}
			// The JSON names, as clients read them.
			for _, want := range []string{`"phase": "backoff"`, `"reason": "Forbidden"`, `"oldestPendingSeconds": 3`, `"namespace": "team-a"`, `"resource": "v1/configmaps"`} {
				if !strings.Contains(body, want) {
					t.Errorf("JSON lacks %s", want)
				}
			}
		}
	})
}

func TestStatusHandlerHTML(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, unblock := statusFixture(t)
		defer unblock()
		h := Handler(f, Options{Title: "demo <status>", Refresh: 2 * time.Second})
		resp, body := get(t, h, "/", "text/html,application/xhtml+xml,application/json;q=0.9")
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Fatalf("content type %q", ct)
		}
		for _, want := range []string{
			`<meta http-equiv="refresh" content="2">`,
			`<title>demo &lt;status&gt;</title>`,
			`<tr id="informer-configmaps" class="informer healthy phase-watching" data-name="configmaps">`,
			`<tr id="informer-pods-team-a" class="informer unhealthy phase-backoff" data-name="pods &lt;team-a&gt;">`,
			`<td class="reason">Forbidden</td>`,
			`<li class="handler" id="informer-configmaps-handler-1"><span class="name">1</span>: <span class="pending lagging">1 pending</span>, <span class="oldest">3s</span>`,
			`<td class="relists">n/a</td>`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %s", want)
			}
		}
		if strings.Contains(body, "<script") || strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Error("page has a script or an external reference")
		}
		if t.Failed() {
			t.Log(body)
		}
		if resp, _ := get(t, h, "/?format=html", "application/json"); !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Error("format=html did not win over Accept")
		}
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("POST: %d", rec.Code)
		}
	})
}

func TestStatusIDs(t *testing.T) {
	seen := map[string]int{}
	for _, c := range []struct{ name, want string }{
		{"pods", "pods"}, {"Pods", "pods-2"}, {"/v1, Resource=pods in a", "v1-resource-pods-in-a"}, {"", "unnamed"}, {"!!", "unnamed-2"},
	} {
		if got := statusID(c.name, seen); got != c.want {
			t.Errorf("statusID(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestStatusHandlerEmpty(t *testing.T) {
	h := Handler(factory.New(factory.Options{}), Options{Refresh: -1})
	_, body := get(t, h, "/", "")
	if !strings.Contains(body, "no informers") || strings.Contains(body, "http-equiv") {
		t.Errorf("empty page:\n%s", body)
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3 << 20: "3.0 MiB", 5<<30 + 1<<29: "5.5 GiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q; want %q", n, got, want)
		}
	}
}
