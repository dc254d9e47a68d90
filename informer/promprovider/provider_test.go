package promprovider

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/factory"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/store"
)

var (
	cmGVR  = corev1.SchemeGroupVersion.WithResource("configmaps")
	podGVR = corev1.SchemeGroupVersion.WithResource("pods")
)

func source(srv *fake.Server, gvr fake.GVR) func(factory.Selection) cache.ListerWatcherWithContext {
	return func(s factory.Selection) cache.ListerWatcherWithContext {
		return srv.ListerWatcher(fake.LWOptions{Resource: gvr, Namespace: s.Namespace})
	}
}

// scrape serves reg with promhttp on a loopback server, fetches it once in
// the text format and parses it with the Prometheus text parser.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	ts := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	defer ts.Close()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL, nil)
	req.Header.Set("Accept", "text/plain")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// value returns the value of the sample of family name whose labels
// include want (name=value pairs); ok is false if there is none.
func value(mfs map[string]*dto.MetricFamily, name string, want ...string) (float64, bool) {
	mf := mfs[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.Metric {
		have := map[string]string{}
		for _, lp := range m.Label {
			have[lp.GetName()] = lp.GetValue()
		}
		for i := 0; i+1 < len(want); i += 2 {
			if have[want[i]] != want[i+1] {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func TestScrapeMatchesSnapshots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		for i := range 3 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("cm", i)}}
			if _, err := srv.Create(t.Context(), cm); err != nil {
				t.Fatal(err)
			}
		}
		if err := srv.FailNext(fake.Failure{Resource: podGVR, Times: 1000, Kind: fake.Forbidden}); err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		f := factory.New(factory.Options{})
		defer f.Shutdown()
		// One informer built before Register, one after: one call wires
		// both, the reflector counters included.
		pods, err := factory.For(f, podGVR.String(), factory.Selection{}, source(srv, podGVR), informer.Options[*corev1.Pod]{Name: "pods"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Register(reg, f)
		if err != nil {
			t.Fatal(err)
		}
		cms, err := factory.For(f, cmGVR.String(), factory.Selection{}, source(srv, cmGVR), informer.Options[*corev1.ConfigMap]{
			Name:     "configmaps",
			Indexers: store.Indexers[*corev1.ConfigMap]{"byName": func(cm *corev1.ConfigMap) ([]string, error) { return []string{cm.Name[:2]}, nil }}})
		if err != nil {
			t.Fatal(err)
		}
		// One fast handler, one stuck in its first call.
		if _, err := cms.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{}, informer.HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
		block := make(chan struct{})
		defer close(block)
		stuck, _ := cms.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(*corev1.ConfigMap, bool) { <-block }}, informer.HandlerOptions{Name: "stuck"})
		f.Start(klog.NewContext(t.Context(), logr.Discard()))
		if err := cms.WaitForSync(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(7 * time.Second) // fake time: ages the stuck handler's backlog, lets pods fail a few times
		synctest.Wait()

		mfs := scrape(t, reg)
		snaps := f.Snapshots()
		if len(snaps) != 2 {
			t.Fatalf("%d snapshots", len(snaps))
		}
		cmL := []string{"name", "configmaps", "group", "", "version", "v1", "resource", "configmaps"}
		podL := []string{"name", "pods", "group", "", "version", "v1", "resource", "pods"}
		check := func(name string, want float64, labels ...string) {
			t.Helper()
			got, ok := value(mfs, name, labels...)
			if !ok || got != want {
				t.Errorf("%s%v = %v (present %v), want %v", name, labels, got, ok, want)
			}
		}
		cmSnap, podSnap := snaps[0], snaps[1]
		st := stuck.Stats()
		if st.Pending != 2 || st.OldestPending < 7*time.Second {
			t.Fatalf("stuck handler stats = %+v", st)
		}
		check("informer_cache_objects", float64(cms.Reader().Len()), cmL...)
		check("informer_cache_objects", 3, cmL...)
		check("informer_cache_bytes", float64(cmSnap.Bytes), cmL...)
		if cmSnap.Bytes <= 0 {
			t.Errorf("cms snapshot estimates %d bytes for 3 objects", cmSnap.Bytes)
		}
		check("informer_cache_index_values", 1, with(cmL, "index", "byName")...)
		check("informer_queued_items", float64(cmSnap.Queued), cmL...)
		check("informer_synced", 1, cmL...)
		check("informer_synced", 0, podL...)
		rv, _ := rvValue(cms.Status().LastSyncResourceVersion)
		check("informer_store_resource_version", rv, cmL...)
		check("informer_reflector_phase", 1, with(cmL, "phase", "watching")...)
		check("informer_reflector_phase", 0, with(cmL, "phase", "backoff")...)
		check("informer_reflector_phase", 1, with(podL, "phase", "backoff")...)
		check("informer_reflector_consecutive_failures", float64(pods.Status().Failures), podL...)
		check("informer_reflector_last_error", 1, with(podL, "reason", "Forbidden")...)
		if podSnap.Status.Failures < 1 || podSnap.Status.Reason != reflector.ReasonForbidden {
			t.Errorf("pods status = %+v, want failures, forbidden", podSnap.Status)
		}
		// Every failed attempt counts its errors (a failed streaming list
		// and the paginated list it falls back to are one attempt).
		if got, _ := value(mfs, "informer_reflector_errors_total", with(podL, "reason", "Forbidden")...); got < float64(podSnap.Status.Failures) {
			t.Errorf("errors_total{Forbidden} = %v, want at least the %d failures", got, podSnap.Status.Failures)
		}
		check("informer_reflector_errors_total", 0, with(cmL, "reason", "Forbidden")...)
		check("informer_reflector_relists_total", 1, with(cmL, "cause", "None")...)
		// The first list is a streaming list (a watch) that goes on as the
		// watch: no list request, one watch, the objects as ADDED events.
		check("informer_reflector_lists_total", 0, cmL...)
		check("informer_reflector_watches_total", 1, cmL...)
		check("informer_reflector_watch_events_total", 3, with(cmL, "type", "ADDED")...)
		check("informer_reflector_first_sync_seconds", 0, cmL...)
		// Every batch the informer processed was timed (client-go's
		// histogram, here with the fake clock of the bubble).
		if n, ok := value(mfs, "informer_processing_latency_seconds", cmL...); !ok || n < 1 {
			t.Errorf("informer_processing_latency_seconds for configmaps: %v observations (present %v), want at least 1", n, ok)
		}
		if _, ok := value(mfs, "informer_reflector_first_sync_seconds", podL...); ok {
			t.Error("pods never synced but has a first sync time")
		}
		if got := []string{cmSnap.Handlers[0].Name, cmSnap.Handlers[1].Name}; got[0] != "0" || got[1] != "stuck" {
			t.Errorf("handler names %q, want the unnamed one by index and the named one by name", got)
		}
		for i, r := range []*informer.Registration[*corev1.ConfigMap]{nil, stuck} {
			hl := with(cmL, "handler", cmSnap.Handlers[i].Name)
			s := cmSnap.Handlers[i].Stats
			if r != nil && s != r.Stats() {
				t.Errorf("snapshot stats %+v != Stats() %+v", s, r.Stats())
			}
			check("informer_handler_pending", float64(s.Pending), hl...)
			check("informer_handler_oldest_pending_seconds", s.OldestPending.Seconds(), hl...)
			check("informer_handler_processed_total", float64(s.Processed), hl...)
			check("informer_handler_coalesced_total", float64(s.Coalesced), hl...)
			check("informer_handler_panics_total", float64(s.Panics), hl...)
			check("informer_handler_duration_seconds_total", s.HandlerTime.Seconds(), hl...)
			check("informer_handler_busy_seconds", s.Busy.Seconds(), hl...)
		}
		check("informer_handler_processed_total", 3, with(cmL, "handler", "0")...)
		check("informer_handler_oldest_pending_seconds", 7, with(cmL, "handler", "stuck")...)

		// A live change shows up in the next scrape.
		if _, err := srv.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "late"}}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		mfs = scrape(t, reg)
		check("informer_cache_objects", 4, cmL...)
		check("informer_reflector_watch_events_total", 4, with(cmL, "type", "ADDED")...)
		check("informer_handler_pending", 3, with(cmL, "handler", "stuck")...)
	})
}

func TestRegisterTwiceSharesTheProvider(t *testing.T) {
	reg := prometheus.NewRegistry()
	f1, f2 := factory.New(factory.Options{}), factory.New(factory.Options{})
	p1, err := Register(reg, f1)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := Register(reg, f2)
	if err != nil || p1 != p2 {
		t.Fatalf("second Register: %v, same provider %v", err, p1 == p2)
	}
	if p1.Reflector("x") != p2.Reflector("x") {
		t.Fatal("Reflector(name) differs for the same name")
	}
	if len(p1.factories) != 2 {
		t.Fatalf("%d factories, want 2", len(p1.factories))
	}
}

func TestReflectorOnlyMetricsAndBadRV(t *testing.T) {
	reg := prometheus.NewRegistry()
	p, err := New(Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	m := p.Reflector("orphan")
	m.Relist(reflector.ReasonExpired)
	m.Error(reflector.Reason(99))
	m.Event("STRANGE")
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&text, mf); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{
		`informer_reflector_relists_total{cause="Expired",group="",name="orphan",resource="",version=""} 1`,
		`informer_reflector_errors_total{group="",name="orphan",reason="Other",resource="",version=""} 1`,
		`informer_reflector_watch_events_total{group="",name="orphan",resource="",type="other",version=""} 1`,
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("missing %s in\n%s", want, text.String())
		}
	}
	for rv, want := range map[string]float64{"1234": 1234, "12345678901234567890": 678901234567890} {
		if got, ok := rvValue(rv); !ok || got != want {
			t.Errorf("rvValue(%s) = %v %v", rv, got, ok)
		}
	}
	for _, rv := range []string{"", "abc", "-1"} {
		if _, ok := rvValue(rv); ok {
			t.Errorf("rvValue(%q) ok", rv)
		}
	}
}

// The reflector's counters allocate nothing: turning them on adds atomic
// increments to the reflector's goroutine, no garbage.
func TestReflectorMetricsDoNotAllocate(t *testing.T) {
	p, err := New(Options{Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	m := p.Reflector("x")
	allocs := testing.AllocsPerRun(1000, func() {
		m.List()
		m.Watch()
		m.Relist(reflector.ReasonExpired)
		m.Event(watch.Modified)
		m.Event(watch.Bookmark)
		m.Error(reflector.ReasonConnection)
		m.ResourceVersion("12345")
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per round, want 0", allocs)
	}
}
