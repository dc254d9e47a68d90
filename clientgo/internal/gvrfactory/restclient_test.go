package gvrfactory

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/metadata"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/rest"
)

// TestRESTClientOf pins what RESTClientOf reads of client-go's clients
// (the version in go.mod): the REST client of the metadata and dynamic
// clients NewForConfig returns; nothing, with a reason, for fakes, nil
// clients and other types.
func TestRESTClientOf(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]any{"metadata": mc, "dynamic": dc} {
		rc, why := RESTClientOf(c)
		if rc == nil {
			t.Fatalf("%s: no REST client: %s", name, why)
		}
		if got := rc.Get().AbsPath("api", "v1", "pods").URL().String(); got != "https://127.0.0.1:1/api/v1/pods" {
			t.Errorf("%s: the REST client's URL is %s", name, got)
		}
	}
	scheme := runtime.NewScheme()
	_ = metav1.AddMetaToScheme(scheme)
	for name, c := range map[string]any{
		"metadata fake":    metadatafake.NewSimpleMetadataClient(scheme),
		"dynamic fake":     dynamicfake.NewSimpleDynamicClient(scheme),
		"nil":              nil,
		"nil metadata":     (*metadata.Client)(nil),
		"nil dynamic":      (*dynamic.DynamicClient)(nil),
		"zero metadata":    &metadata.Client{},
		"a wrapped client": struct{ metadata.Interface }{mc},
	} {
		if rc, why := RESTClientOf(c); rc != nil || why == "" {
			t.Errorf("%s: RESTClientOf = %v, %q; want nil and a reason", name, rc, why)
		}
	}
}
