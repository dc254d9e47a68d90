package crcache

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

// probedListWatches returns the ListWatches controller-runtime's cache,
// built with opts over the probe transport, hands NewInformer for
// examples, in order. Nothing is sent: the cache is not started.
func probedListWatches(t *testing.T, opts cache.Options, examples ...client.Object) []toolscache.ListerWatcher {
	t.Helper()
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
	m.Add(corev1.SchemeGroupVersion.WithKind("Node"), meta.RESTScopeRoot)
	m.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), meta.RESTScopeNamespace)
	opts.Mapper = m
	opts.HTTPClient = withProbeTransport(&http.Client{Transport: roundTripper(func(*http.Request) (*http.Response, error) {
		t.Error("a probed request was sent")
		return nil, errors.New("sent")
	})})
	var lws []toolscache.ListerWatcher
	opts.NewInformer = func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, idx toolscache.Indexers) toolscache.SharedIndexInformer {
		lws = append(lws, lw)
		return toolscache.NewSharedIndexInformer(lw, obj, resync, idx)
	}
	c, err := cache.New(&rest.Config{Host: "http://h"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range examples {
		if _, err := c.GetInformer(t.Context(), obj, cache.BlockUntilSynced(false)); err != nil {
			t.Fatal(err)
		}
	}
	return lws
}

// A probe learns exactly the path (with the namespace), selectors and
// bookmarks of controller-runtime's ListWatches, namespaced and cluster-
// scoped, typed and metadata-only, with cache.Options.ByObject's
// selectors; it fails, saying why, on a ListWatch of another client, a
// query parameter the cache cannot repeat, and a list or watch that does
// not return within probeTimeout (in virtual time). It takes no longer
// than that, and its context is cancelled when it returns.
func TestProbeLearns(t *testing.T) {
	// A field selector on the namespace makes controller-runtime list
	// in it (Options.ByObject's Namespaces would build a multi-namespace
	// informer, whose goroutine waits for a sync that never comes here).
	webOnN1 := cache.ByObject{
		Label: labels.SelectorFromSet(labels.Set{"app": "web"}),
		Field: fields.AndSelectors(fields.OneTermEqualSelector("metadata.namespace", "a"), fields.OneTermEqualSelector("spec.nodeName", "n1")),
	}
	noBookmarks := false
	workers := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{"role": "worker"}), EnableWatchBookmarks: &noBookmarks}
	named := cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", "d1")}
	deployments := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}}
	cr := probedListWatches(t, cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: webOnN1, &corev1.Node{}: workers, deployments: named}},
		&corev1.Pod{}, &corev1.Node{}, deployments)
	if len(cr) != 3 {
		t.Fatalf("%d ListWatches built, want 3", len(cr))
	}
	rt := &probeTransport{next: roundTripper(func(*http.Request) (*http.Response, error) { return nil, errors.New("sent") })}
	get := func(ctx context.Context, url string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		_, err = rt.RoundTrip(req)
		return err
	}
	// hang returns when ctx ends, as a ListWatch waiting on something.
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	listing := func(url string) func(context.Context, metav1.ListOptions) (runtime.Object, error) {
		return func(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) { return nil, get(ctx, url) }
	}
	watching := func(url string) func(context.Context, metav1.ListOptions) (watch.Interface, error) {
		return func(ctx context.Context, _ metav1.ListOptions) (watch.Interface, error) { return nil, get(ctx, url) }
	}
	for _, tc := range []struct {
		name string
		lw   toolscache.ListerWatcher
		want request
		err  string
		took time.Duration
	}{
		{name: "namespaced, ByObject's selectors", lw: cr[0],
			want: request{path: "/api/v1/namespaces/a/pods", labelSelector: "app=web", fieldSelector: "metadata.namespace=a,spec.nodeName=n1", bookmarks: true}},
		{name: "cluster-scoped, no bookmarks", lw: cr[1],
			want: request{path: "/api/v1/nodes", labelSelector: "role=worker"}},
		{name: "metadata-only, all namespaces", lw: cr[2],
			want: request{path: "/apis/apps/v1/deployments", fieldSelector: "metadata.name=d1", bookmarks: true}},
		{name: "another client", lw: &toolscache.ListWatch{
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				return nil, errors.New("not through the cache's client")
			},
		}, err: "the list did not reach the cache's HTTP client (error not through the cache's client)"},
		{name: "unrepeatable parameter", lw: &toolscache.ListWatch{
			ListWithContextFunc: listing("http://h/api/v1/pods?limit=5"), WatchFuncWithContext: watching("http://h/api/v1/pods?watch=true"),
		}, err: "the list sends the query parameter limit=5, which the cache cannot repeat"},
		{name: "another path", lw: &toolscache.ListWatch{
			ListWithContextFunc: listing("http://h/api/v1/pods"), WatchFuncWithContext: watching("http://h/api/v1/nodes?watch=true"),
		}, err: "the watch's path /api/v1/nodes is not the list's, /api/v1/pods"},
		{name: "list timeout", lw: &toolscache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) { return nil, hang(ctx) },
		}, err: "the list did not return within the probe's 5s (error context deadline exceeded)", took: probeTimeout},
		{name: "watch timeout", lw: &toolscache.ListWatch{
			ListWithContextFunc:  listing("http://h/api/v1/pods"),
			WatchFuncWithContext: func(ctx context.Context, _ metav1.ListOptions) (watch.Interface, error) { return nil, hang(ctx) },
		}, err: "the watch did not return within the probe's 5s (error context deadline exceeded)", took: probeTimeout},
	} {
		synctest.Test(t, func(t *testing.T) {
			var seen []context.Context
			lw := &toolscache.ListWatch{
				ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
					seen = append(seen, ctx)
					return toolscache.ToListerWatcherWithContext(tc.lw).ListWithContext(ctx, o)
				},
				WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
					seen = append(seen, ctx)
					return toolscache.ToListerWatcherWithContext(tc.lw).WatchWithContext(ctx, o)
				},
			}
			start := time.Now()
			got, err := probeListWatch(lw)
			if took := time.Since(start); took != tc.took {
				t.Errorf("%s: the probe took %v, want %v", tc.name, took, tc.took)
			}
			switch {
			case tc.err == "" && (err != nil || got != tc.want):
				t.Errorf("%s: probe = %+v, %v; want %+v", tc.name, got, err, tc.want)
			case tc.err != "" && (err == nil || err.Error() != tc.err || got != request{}):
				t.Errorf("%s: probe = %+v, %v; want the error %q", tc.name, got, err, tc.err)
			}
			for i, ctx := range seen {
				if ctx.Err() == nil {
					t.Errorf("%s: the probe's context %d is not done after it returned", tc.name, i)
				}
			}
		})
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
