package restsource_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/restsource"
)

// TestListTypeMetaLikeClientGo: a list body without a kind or apiVersion,
// as test servers send ("{}", kube-controller-manager's garbage collector
// tests), is what client-go's clients make of it: an empty list to the
// typed clientset, which decodes into the list it expects, and an error
// to the metadata and dynamic clients. A list of another kind is refused
// where client-go would hand an informer an empty list instead
// (deliberate).
func TestListTypeMetaLikeClientGo(t *testing.T) {
	// deliberate are the lists client-go takes and restsource refuses.
	deliberate := map[string]string{
		`typed {"apiVersion":"v1","kind":"PodList"}`:        "client-go's typed client returns an empty list",
		`typed {"apiVersion":"v1","kind":"List"}`:           "client-go's typed client returns an empty list",
		`unstructured {"apiVersion":"v1","kind":"PodList"}`: "another group version's list",
		`unstructured {"apiVersion":"v1","kind":"List"}`:    "another group version's list",
	}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	for _, body := range []string{
		`{}`,
		`{"items":[]}`,
		`{"metadata":{"resourceVersion":"5"}}`,
		`{"items":[{"metadata":{"name":"a","resourceVersion":"3"}}],"metadata":{"resourceVersion":"4"}}`,
		`{"kind":"DeploymentList"}`,
		`{"apiVersion":"apps/v1"}`,
		`{"apiVersion":"apps/v1","kind":"DeploymentList","metadata":{"resourceVersion":"7"}}`,
		`{"apiVersion":"v1","kind":"PodList"}`,
		`{"kind":"PodList"}`,
		`{"apiVersion":"v1","kind":"List"}`,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		cfg := &rest.Config{Host: srv.URL, QPS: -1}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		mc, err := metadata.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		dc, err := dynamic.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		rc := cs.AppsV1().RESTClient()
		opts := restsource.Options{Client: rc, Resource: "deployments", GroupVersionKind: deployments.GroupVersion().WithKind("")}

		typed := func() (runtime.Object, error) {
			return cs.AppsV1().Deployments("").List(t.Context(), metav1.ListOptions{})
		}
		metaList := func() (runtime.Object, error) {
			return mc.Resource(deployments).List(t.Context(), metav1.ListOptions{})
		}
		dyn := func() (runtime.Object, error) {
			return dc.Resource(deployments).List(t.Context(), metav1.ListOptions{})
		}
		for _, tc := range []struct {
			name     string
			clientGo func() (runtime.Object, error)
			new      func(restsource.Options) (cache.ListerWatcherWithContext, error)
		}{
			{"typed", typed, func(o restsource.Options) (cache.ListerWatcherWithContext, error) {
				o.GroupVersionKind = schema.GroupVersionKind{}
				return restsource.New[*appsv1.Deployment](o)
			}},
			{"metadata", metaList, func(o restsource.Options) (cache.ListerWatcherWithContext, error) {
				return restsource.New[*metav1.PartialObjectMetadata](o)
			}},
			{"unstructured", dyn, func(o restsource.Options) (cache.ListerWatcherWithContext, error) {
				return restsource.New[*unstructured.Unstructured](o)
			}},
		} {
			want, wantErr := tc.clientGo()
			src, err := tc.new(opts)
			if err != nil {
				t.Fatal(err)
			}
			got, gotErr := src.ListWithContext(t.Context(), metav1.ListOptions{})
			if why := deliberate[tc.name+" "+body]; why != "" {
				if gotErr == nil || wantErr != nil {
					t.Errorf("%s %s (%s): restsource's error %v, client-go's %v", body, tc.name, why, gotErr, wantErr)
				}
				continue
			}
			if (gotErr == nil) != (wantErr == nil) {
				t.Errorf("%s %s: restsource's error %v, client-go's %v", body, tc.name, gotErr, wantErr)
				continue
			}
			if wantErr != nil {
				continue
			}
			if g, w := listSummary(t, got), listSummary(t, want); g != w {
				t.Errorf("%s %s: restsource listed %s, client-go %s", body, tc.name, g, w)
			}
		}
	}
}

// listSummary is a list's resource version and its items' names and
// resource versions.
func listSummary(t *testing.T, list runtime.Object) string {
	t.Helper()
	lm, err := meta.ListAccessor(list)
	if err != nil {
		t.Fatal(err)
	}
	s := "rv=" + lm.GetResourceVersion()
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		m, err := meta.Accessor(it)
		if err != nil {
			t.Fatal(err)
		}
		s += " " + m.GetName() + "@" + m.GetResourceVersion()
	}
	return s
}
