package restsource_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// watchStream is a stream with every kind of event: pods with and without
// fields the client does not know, a bookmark, ERROR events with Statuses.
func watchStream(t testing.TB, e enc) []byte {
	bookmark := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "200",
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
	expired := &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired,
		Message: "too old resource version: 1 (200)"}
	internal := &metav1.Status{Status: metav1.StatusFailure, Code: 500, Reason: metav1.StatusReasonInternalError,
		Message: "boom", Details: &metav1.StatusDetails{Name: "x", Kind: "pods", RetryAfterSeconds: 3,
			Causes: []metav1.StatusCause{{Type: metav1.CauseTypeUnexpectedServerResponse, Message: "m", Field: "f"}}}}
	var b []byte
	b = append(b, e.frame(t, watch.Added, testPod(1))...)
	b = append(b, e.rawFrame(t, string(watch.Modified), e.withUnknownField(t, e.object(t, testPod(2))))...)
	b = append(b, e.frame(t, watch.Deleted, testPod(3))...)
	b = append(b, e.frame(t, watch.Added, &corev1.Pod{})...) // empty
	b = append(b, e.frame(t, watch.Bookmark, bookmark)...)
	b = append(b, e.frame(t, watch.Error, expired)...)
	b = append(b, e.frame(t, watch.Error, internal)...)
	b = append(b, e.frame(t, watch.Modified, testPod(4))...)
	return b
}

// TestWatchDecodesLikeClientGo: on the same bytes, restsource's watch
// delivers exactly the events client-go's clientset watch delivers, for
// both encodings, inline and with workers.
func TestWatchDecodesLikeClientGo(t *testing.T) {
	for _, ct := range contentTypes {
		srv := newServer(t)
		srv.watch[ct] = watchStream(t, newEnc(ct))
		cw, err := srv.clientset(t, ct).CoreV1().Pods("").Watch(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := drain(t, cw)
		if len(want) != 8 {
			t.Fatalf("%s: client-go decoded %d events, want 8", ct, len(want))
		}
		for _, workers := range []int{1, 4} {
			w, err := srv.source(t, ct, workers).WatchWithContext(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			equal(t, ct+" events", drain(t, w), want)
			w.Stop()
		}
	}
}

// TestListDecodesLikeClientGo: the items and list metadata equal the
// clientset's PodList, for both encodings, with and without workers; the
// list is long enough to be decoded in several batches as it arrives.
func TestListDecodesLikeClientGo(t *testing.T) {
	for _, ct := range contentTypes {
		e := newEnc(ct)
		srv := newServer(t)
		l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "77", Continue: "c1", RemainingItemCount: ptr.To(int64(5))}}
		for i := range 5000 {
			l.Items = append(l.Items, *testPod(i))
		}
		srv.list[ct] = e.object(t, l)
		if len(srv.list[ct]) < 2*1<<20 {
			t.Fatalf("a %d-byte list fits in fewer than two batches", len(srv.list[ct]))
		}
		want, err := srv.clientset(t, ct).CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, workers := range []int{1, 3} {
			got, err := srv.source(t, ct, workers).ListWithContext(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			gl := got.(*metav1.List)
			equal(t, ct+" list metadata", gl.ListMeta, want.ListMeta)
			items := make([]corev1.Pod, len(gl.Items))
			for i, it := range gl.Items {
				items[i] = *it.Object.(*corev1.Pod)
			}
			equal(t, ct+" items", items, want.Items)
		}
	}
}
