package crcache

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

func TestSplitPath(t *testing.T) {
	for _, tc := range []struct {
		path, base, ns, resource, err string
	}{
		{path: "/api/v1/pods", base: "/api/v1", resource: "pods"},
		{path: "/api/v1/namespaces/a/pods", base: "/api/v1", ns: "a", resource: "pods"},
		{path: "/api/v1/namespaces", base: "/api/v1", resource: "namespaces"},
		{path: "/prefix/apis/apps/v1/namespaces/b/deployments", base: "/prefix/apis/apps/v1/", ns: "b", resource: "deployments"},
		{path: "/apis/apps/v1/deployments", base: "/api/v1", err: "not under"},
		{path: "/api/v1/namespaces/a/pods/p0", base: "/api/v1", err: "not a list"},
		{path: "/api/v1/", base: "/api/v1", err: "not a list"},
	} {
		ns, resource, err := splitPath(tc.path, tc.base)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("splitPath(%q, %q) = %v, want an error with %q", tc.path, tc.base, err, tc.err)
			}
			continue
		}
		if err != nil || ns != tc.ns || resource != tc.resource {
			t.Errorf("splitPath(%q, %q) = %q, %q, %v; want %q, %q", tc.path, tc.base, ns, resource, err, tc.ns, tc.resource)
		}
	}
}

// A ListWatch that does not reach the cache's HTTP client, or sends a
// parameter the cache cannot repeat, fails the probe with the reason; a
// recorded request never reaches the next transport.
func TestProbeFails(t *testing.T) {
	sent := 0
	rt := &probeTransport{next: roundTripper(func(*http.Request) (*http.Response, error) { sent++; return nil, errors.New("sent") })}
	get := func(ctx context.Context, url string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		_, err = rt.RoundTrip(req)
		return err
	}
	for _, tc := range []struct {
		name string
		lw   cache.ListerWatcher
		want string
	}{
		{name: "another client", lw: &cache.ListWatch{
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				return nil, errors.New("not through the cache's client")
			},
		}, want: "did not reach"},
		{name: "unknown parameter", lw: &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
				return nil, get(ctx, "http://h/api/v1/pods?limit=5")
			},
			WatchFuncWithContext: func(ctx context.Context, _ metav1.ListOptions) (watch.Interface, error) {
				return nil, get(ctx, "http://h/api/v1/pods?watch=true")
			},
		}, want: "limit=5"},
	} {
		if _, err := probeListWatch(tc.lw); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: probe error %v, want one with %q", tc.name, err, tc.want)
		}
	}
	if sent != 0 {
		t.Fatalf("%d probed requests were sent", sent)
	}
	if err := get(t.Context(), "http://h/api/v1/pods"); err == nil || err.Error() != "sent" {
		t.Fatalf("a request without a probe: %v, want it sent", err)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
