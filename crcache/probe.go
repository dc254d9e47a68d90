package crcache

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// A probe learns what a ListWatch handed to cache.Options.NewInformer
// would request, without sending anything: controller-runtime's closures
// hide the namespace and the selectors, but every request they make goes
// through the cache's HTTP client, whose transport (probeTransport)
// recognises a context carrying a *probe, records the request and fails
// it with errProbed.

// probeTimeout bounds a probe. A probe runs while controller-runtime
// builds an informer, holding the lock of its informer map, so a
// ListWatch that blocks in it (a wrapper of the caller's waiting on
// something) would stall every GetInformer of the cache; through the
// cache's HTTP client a probe returns at once, sending nothing and
// waiting on no rate limiter (see probeLimiter), so a few seconds are
// generous. A probe that times out makes the informer list and watch
// through controller-runtime's client, as any other failed probe.
const probeTimeout = 5 * time.Second

// errProbed fails every probed request: it never leaves the process.
var errProbed = errors.New("crcache: request recorded by a probe, not sent")

// errProbeTimeout is the cause of a probe's context ending at its
// deadline.
var errProbeTimeout = fmt.Errorf("did not return within the probe's %v", probeTimeout)

// probeKey is the context key of a *probe.
type probeKey struct{}

// probe records the one request made with its context.
type probe struct {
	url    *url.URL
	accept string
}

// probeTransport is the transport of the HTTP client the cache's clients
// use: next, except for requests whose context carries a *probe.
type probeTransport struct {
	next http.RoundTripper
}

func (t *probeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if p, ok := req.Context().Value(probeKey{}).(*probe); ok {
		u := *req.URL
		p.url, p.accept = &u, req.Header.Get("Accept")
		return nil, errProbed
	}
	return t.next.RoundTrip(req)
}

// withProbeTransport is a copy of c whose transport is a probeTransport
// over c's.
func withProbeTransport(c *http.Client) *http.Client {
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	probed := *c
	probed.Transport = &probeTransport{next: next}
	return &probed
}

// request is what a probe learnt of a ListWatch's list and watch.
type request struct {
	// path is the list's URL path: the API's base path, the namespace (if
	// any) and the resource.
	path string
	// labelSelector and fieldSelector are the list's.
	labelSelector, fieldSelector string
	// bookmarks is the watch's allowWatchBookmarks.
	bookmarks bool
}

// probeListWatch calls lw's list and watch once each with a probing
// context, bounded by probeTimeout and cancelled on return, and returns
// what they would request. It fails when lw does not reach the server
// through the probed transport (a ListWatch of another client), does not
// return within probeTimeout, or requests something a restsource Source
// cannot repeat.
func probeListWatch(lw cache.ListerWatcher) (request, error) {
	lwc := cache.ToListerWatcherWithContext(lw)
	var list, watch probe
	// Carries only the probe and its deadline: nothing is sent.
	ctx, cancel := context.WithTimeoutCause(context.Background(), probeTimeout, errProbeTimeout)
	defer cancel()
	_, err := lwc.ListWithContext(context.WithValue(ctx, probeKey{}, &list), metav1.ListOptions{})
	if context.Cause(ctx) == errProbeTimeout {
		return request{}, fmt.Errorf("the list %w (error %v)", errProbeTimeout, err)
	}
	if !errors.Is(err, errProbed) || list.url == nil {
		return request{}, fmt.Errorf("the list did not reach the cache's HTTP client (error %v)", err)
	}
	w, err := lwc.WatchWithContext(context.WithValue(ctx, probeKey{}, &watch), metav1.ListOptions{})
	if w != nil {
		w.Stop()
	}
	if context.Cause(ctx) == errProbeTimeout {
		return request{}, fmt.Errorf("the watch %w (error %v)", errProbeTimeout, err)
	}
	if !errors.Is(err, errProbed) || watch.url == nil {
		return request{}, fmt.Errorf("the watch did not reach the cache's HTTP client (error %v)", err)
	}
	r := request{path: list.url.Path}
	for k, v := range list.url.Query() {
		switch k {
		case "labelSelector":
			r.labelSelector = v[0]
		case "fieldSelector":
			r.fieldSelector = v[0]
		default:
			return request{}, fmt.Errorf("the list sends the query parameter %s=%s, which the cache cannot repeat", k, strings.Join(v, ","))
		}
	}
	r.bookmarks = watch.url.Query().Get("allowWatchBookmarks") == "true"
	if watch.url.Path != list.url.Path {
		return request{}, fmt.Errorf("the watch's path %s is not the list's, %s", watch.url.Path, list.url.Path)
	}
	return r, nil
}

// splitPath returns the namespace and resource of path, a list's path
// under base (the API's base path, as /api/v1 or /apis/apps/v1 with the
// server's own prefix).
func splitPath(path, base string) (namespace, resource string, err error) {
	rest, ok := strings.CutPrefix(path, strings.TrimSuffix(base, "/")+"/")
	if !ok {
		return "", "", fmt.Errorf("the path %s is not under %s", path, base)
	}
	switch parts := strings.Split(rest, "/"); {
	case len(parts) == 1 && parts[0] != "":
		return "", parts[0], nil
	case len(parts) == 3 && parts[0] == "namespaces" && parts[1] != "" && parts[2] != "":
		return parts[1], parts[2], nil
	}
	return "", "", fmt.Errorf("the path %s is not a list of a resource under %s", path, base)
}
