package statuspage

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/factory"
	"github.com/listwatch/listwatch/informer/promprovider"
	"github.com/listwatch/listwatch/informer/statuspage"
	"github.com/listwatch/listwatch/reflector"
)

const chromium = "/usr/bin/chromium"

// browserTimeout bounds each browser run.
const browserTimeout = 60 * time.Second

func requireChromium(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("LISTWATCH_REQUIRE_CHROMIUM") == "" {
			t.Skipf("%s not found (apt-get install chromium); set LISTWATCH_REQUIRE_CHROMIUM to fail instead", chromium)
		}
		t.Fatalf("LISTWATCH_REQUIRE_CHROMIUM is set but %s is missing: %v", chromium, err)
	}
}

// browse runs headless Chromium with args and returns its standard output.
func browse(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), browserTimeout)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, chromium, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Helper processes may hold the output pipes a little longer.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

func TestStatusPageInHeadlessChromium(t *testing.T) {
	requireChromium(t)
	ctx, stop := context.WithCancel(klog.NewContext(t.Context(), logr.Discard()))
	defer stop()

	srv, err := fake.NewServer(fake.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.CloseWatches(fake.GVR{})
	for i := range 5 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprint("settings-", i)}}
		if _, err := srv.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	cmGVR, podGVR := fake.ConfigMaps().GVR, fake.Pods().GVR
	if err := srv.FailNext(fake.Failure{Resource: podGVR, Times: 1 << 20, Kind: fake.Forbidden}); err != nil {
		t.Fatal(err)
	}
	lw := func(gvr fake.GVR) func(factory.Selection) cache.ListerWatcherWithContext {
		return func(s factory.Selection) cache.ListerWatcherWithContext {
			return srv.ListerWatcher(fake.LWOptions{Resource: gvr, Namespace: s.Namespace})
		}
	}

	f := factory.New(factory.Options{})
	defer f.Shutdown()
	p, err := promprovider.Register(prometheus.NewRegistry(), f)
	if err != nil {
		t.Fatal(err)
	}
	cms, err := factory.For(f, cmGVR.String(), factory.Selection{}, lw(cmGVR), informer.Options[*corev1.ConfigMap]{Name: "configmaps",
		Reflector: reflector.Config[*corev1.ConfigMap]{Metrics: p.Reflector("configmaps")}})
	if err != nil {
		t.Fatal(err)
	}
	// A handler stuck in its first call, so that the page shows a lag.
	release := make(chan struct{})
	defer close(release)
	if _, err := cms.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(*corev1.ConfigMap, bool) { <-release }},
		informer.HandlerOptions{Name: "stuck"}); err != nil {
		t.Fatal(err)
	}
	// The forbidden informer retries quickly; its second failure tells the
	// test that the first one is published in its Status (the reflector
	// publishes its status before it waits for the next attempt).
	failures := make(chan struct{}, 2)
	_, err = factory.For(f, podGVR.String(), factory.Selection{Namespace: "team-a"}, lw(podGVR), informer.Options[*corev1.Pod]{
		Name:      "pods in team-a",
		Reflector: reflector.Config[*corev1.Pod]{Metrics: p.Reflector("pods in team-a"), Backoff: reflector.Backoff{Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond, Slow: 10 * time.Millisecond}},
		WatchErrorHandler: func(context.Context, error) {
			select {
			case failures <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	syncCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := cms.WaitForSync(syncCtx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case <-failures:
		case <-syncCtx.Done():
			t.Fatal("the pods informer did not fail twice")
		}
	}

	ts := httptest.NewServer(statuspage.Handler(f, statuspage.Options{Title: "statuspage test", Relists: p.Relists}))
	defer ts.Close()
	t.Logf("serving %s", ts.URL)

	dom := browse(t, "--dump-dom", ts.URL+"/")
	rows := map[string]*regexp.Regexp{
		"configmaps":        regexp.MustCompile(`<tr id="informer-configmaps" class="informer healthy phase-watching"`),
		"pods in team-a":    regexp.MustCompile(`<tr id="informer-pods-in-team-a" class="informer unhealthy phase-\w+"`),
		"forbidden reason":  regexp.MustCompile(`(?s)id="informer-pods-in-team-a".*?<td class="reason">Forbidden</td>`),
		"forbidden error":   regexp.MustCompile(`(?s)id="informer-pods-in-team-a".*?<td class="error">[^<]*forbidden[^<]*</td>`),
		"objects":           regexp.MustCompile(`(?s)id="informer-configmaps".*?<td class="objects">5</td>`),
		"first list":        regexp.MustCompile(`(?s)id="informer-configmaps".*?<td class="relists">None 1<br></td>`),
		"stuck handler lag": regexp.MustCompile(`<li class="handler" id="informer-configmaps-handler-0"><span class="name">stuck</span>: <span class="pending lagging">4 pending</span>`),
	}
	for what, re := range rows {
		if !re.MatchString(dom) {
			t.Errorf("DOM lacks %s (%s)", what, re)
		}
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}

	dir := os.Getenv("LISTWATCH_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "statuspage.png")
	os.Remove(shot)
	browse(t, "--screenshot="+shot, "--window-size=1200,800", ts.URL+"/")
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if len(png) < 1000 || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("screenshot %s: %d bytes, not a PNG", shot, len(png))
	}
	t.Logf("screenshot %s (%d bytes)", shot, len(png))
}
