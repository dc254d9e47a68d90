package crcache_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/listwatch/crcache"
	"github.com/listwatch/listwatch/informer/statuspage"
)

// Which decoder serves each informer, and why when it is not restsource,
// is in its snapshot with what the probe learnt (resource, namespace),
// on the status page (JSON and HTML) and in informer_decoder_info.
func TestDecoderShown(t *testing.T) {
	_, cfg, _ := plainServer(t)
	page := crcache.NewStatusPage(statuspage.Options{})
	reg := prometheus.NewRegistry()
	startPlainCache(t, cfg, crcache.Options{StatusPage: page, MetricsRegisterer: reg})

	rec := httptest.NewRecorder()
	page.ServeHTTP(rec, httptest.NewRequest("GET", "/informers?format=json", nil))
	var rep statuspage.Report
	if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	const why = "listed in crcache.Options.ClientDecoded"
	var got []string
	for _, inf := range rep.Informers {
		got = append(got, fmt.Sprintf("%s resource=%q namespace=%q decoder=%q reason=%q", inf.Name, inf.Resource, inf.Namespace, inf.Decoder, inf.DecoderReason))
	}
	want := []string{
		`*crcache_test.plainConfigMap resource="" namespace="" decoder="controller-runtime" reason="` + why + `"`,
		`*crcache_test.plainConfigMap#2 resource="" namespace="" decoder="controller-runtime" reason="` + why + `"`,
		`pods/a resource="v1/pods" namespace="a" decoder="restsource" reason=""`,
		`pods/b resource="v1/pods" namespace="b" decoder="restsource" reason=""`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("the status page's JSON shows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	rec = httptest.NewRecorder()
	page.ServeHTTP(rec, httptest.NewRequest("GET", "/informers", nil))
	html := rec.Body.String()
	for _, s := range []string{
		`<small class="decoder">decoded by controller-runtime: listed in crcache.Options.ClientDecoded`,
		`<small class="decoder">decoded by restsource</small>`,
	} {
		if n := strings.Count(html, s); n != 2 {
			t.Errorf("the HTML page has %q %d times, want 2", s, n)
		}
	}

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, f := range families {
		if f.GetName() != "informer_decoder_info" {
			continue
		}
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			got = append(got, fmt.Sprintf("%s %s/%s/%s %s=%v", l["name"], l["group"], l["version"], l["resource"], l["decoder"], m.GetGauge().GetValue()))
		}
	}
	slices.Sort(got)
	want = []string{
		"*crcache_test.plainConfigMap // controller-runtime=1",
		"*crcache_test.plainConfigMap#2 // controller-runtime=1",
		"pods/a /v1/pods restsource=1",
		"pods/b /v1/pods restsource=1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("informer_decoder_info:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
