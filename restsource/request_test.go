package restsource_test

import (
	"net/http"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/restsource"
)

// TestRequestsLikeClientGo: restsource sends the clientset's path and
// query parameters for lists and watches (every ListOptions field that a
// reflector sets), in one namespace and in all, and the TweakListOptions
// edit.
func TestRequestsLikeClientGo(t *testing.T) {
	opts := metav1.ListOptions{LabelSelector: "a=b", FieldSelector: "spec.nodeName=n1", ResourceVersion: "42",
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, TimeoutSeconds: ptr.To(int64(300)),
		AllowWatchBookmarks: true, SendInitialEvents: ptr.To(true), Limit: 500, Continue: "tok"}
	for _, ct := range contentTypes {
		for _, ns := range []string{"", "ns-1"} {
			srv := newServer(t)
			srv.watch[ct], srv.list[ct] = nil, newEnc(ct).object(t, &corev1.PodList{})
			pods := srv.clientset(t, ct).CoreV1().Pods(ns)
			w, err := pods.Watch(t.Context(), opts)
			if err != nil {
				t.Fatal(err)
			}
			drain(t, w)
			_, _ = pods.List(t.Context(), opts)

			tweaked := opts
			tweaked.LabelSelector = "tweaked=yes"
			cw, err := pods.Watch(t.Context(), tweaked)
			if err != nil {
				t.Fatal(err)
			}
			drain(t, cw)

			src, err := restsource.New[*podT](restsource.Options{Client: srv.clientset(t, ct).CoreV1().RESTClient(),
				Resource: "pods", Namespace: ns, ContentType: ct})
			if err != nil {
				t.Fatal(err)
			}
			w, err = src.WatchWithContext(t.Context(), opts)
			if err != nil {
				t.Fatal(err)
			}
			drain(t, w)
			w.Stop()
			_, _ = src.ListWithContext(t.Context(), opts)
			tw, err := restsource.New[*podT](restsource.Options{Client: srv.clientset(t, ct).CoreV1().RESTClient(),
				Resource: "pods", Namespace: ns, ContentType: ct,
				TweakListOptions: func(o *metav1.ListOptions) { o.LabelSelector = "tweaked=yes" }})
			if err != nil {
				t.Fatal(err)
			}
			w, err = tw.WatchWithContext(t.Context(), opts)
			if err != nil {
				t.Fatal(err)
			}
			drain(t, w)
			w.Stop()

			srv.mu.Lock()
			reqs := srv.requests
			srv.mu.Unlock()
			if len(reqs) != 6 {
				t.Fatalf("%d requests, want 6", len(reqs))
			}
			for i, what := range []string{"watch", "list", "tweaked watch"} {
				c, r := reqs[i], reqs[3+i]
				if c.URL.Path != r.URL.Path || !reflect.DeepEqual(c.URL.Query(), r.URL.Query()) {
					t.Errorf("%s %q %s: restsource sent %s?%s, client-go %s?%s", ct, ns, what, r.URL.Path, r.URL.RawQuery, c.URL.Path, c.URL.RawQuery)
				}
				if ca, ra := c.Header.Get("Accept"), r.Header.Get("Accept"); (ct == pb) != (ra == "application/vnd.kubernetes.protobuf, application/json") {
					t.Errorf("%s %s: Accept %q (client-go's %q)", ct, what, ra, ca)
				}
			}
		}
	}
}

// TestErrorsLikeClientGo: failed lists and watches return the errors the
// clientset returns (the same *StatusError values), so apierrors.IsGone,
// IsResourceExpired, IsForbidden... answer the same.
func TestErrorsLikeClientGo(t *testing.T) {
	statuses := []metav1.Status{
		{Code: 410, Reason: metav1.StatusReasonExpired, Message: "The resourceVersion for the provided list is too old."},
		{Code: 410, Reason: metav1.StatusReasonGone, Message: "gone"},
		{Code: 403, Reason: metav1.StatusReasonForbidden, Message: `pods is forbidden: User "x" cannot list resource "pods"`,
			Details: &metav1.StatusDetails{Kind: "pods"}},
		{Code: 404, Reason: metav1.StatusReasonNotFound, Message: "the server could not find the requested resource"},
		{Code: 429, Reason: metav1.StatusReasonTooManyRequests, Message: "slow down", Details: &metav1.StatusDetails{RetryAfterSeconds: 0}},
		{Code: 500, Reason: metav1.StatusReasonInternalError, Message: "etcd is unhappy"},
		{Code: 503, Reason: metav1.StatusReasonServiceUnavailable, Message: "later"},
		{Code: 401, Reason: metav1.StatusReasonUnauthorized, Message: "Unauthorized"},
	}
	for _, ct := range contentTypes {
		for _, st := range statuses {
			st.Status = metav1.StatusFailure
			srv := newServer(t)
			body, err := runtime.Encode(scheme.Codecs.LegacyCodec(metav1.SchemeGroupVersion), &st)
			if err != nil {
				t.Fatal(err)
			}
			srv.errCode, srv.errBody = int(st.Code), body
			pods := srv.clientset(t, ct).CoreV1().Pods("")
			src := srv.source(t, ct, 2)
			_, want := pods.List(t.Context(), metav1.ListOptions{})
			_, got := src.ListWithContext(t.Context(), metav1.ListOptions{})
			equal(t, ct+" list error", got, want)
			if !apierrors.IsResourceExpired(got) == (st.Reason == metav1.StatusReasonExpired) {
				t.Errorf("IsResourceExpired(%v) wrong", got)
			}
			_, want = pods.Watch(t.Context(), metav1.ListOptions{})
			_, got = src.WatchWithContext(t.Context(), metav1.ListOptions{})
			equal(t, ct+" watch error", got, want)
		}
		// an answer that is not a status at all
		srv := newServer(t)
		srv.errCode, srv.errBody = http.StatusBadGateway, []byte("<html>bad gateway</html>")
		_, want := srv.clientset(t, ct).CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
		_, got := srv.source(t, ct, 1).ListWithContext(t.Context(), metav1.ListOptions{})
		equal(t, ct+" 502 list error", got, want)
	}
}
