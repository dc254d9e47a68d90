package fakeapi_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
)

// With Options.Protobuf, a request that prefers protobuf gets it for a
// typed resource and JSON for an unstructured one, as from kube-apiserver;
// without, JSON.
func TestProtobufAnswers(t *testing.T) {
	_, cfg, _ := serve(t, fakeapi.Options{Protobuf: true})
	for _, tc := range []struct {
		path, accept, wantType string
		wantProto              bool
	}{
		{"/api/v1/namespaces/ns/pods", "application/vnd.kubernetes.protobuf,application/json", "application/vnd.kubernetes.protobuf", true},
		{"/api/v1/namespaces/ns/pods", "application/json,application/vnd.kubernetes.protobuf", "application/json", false},
		{"/api/v1/namespaces/ns/pods", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json", "application/json", false},
		{"/apis/example.com/v1/namespaces/ns/widgets", "application/vnd.kubernetes.protobuf,application/json", "application/json", false},
	} {
		check(t, cfg.Host, tc.path, tc.accept, tc.wantType, tc.wantProto)
	}
	_, jsonCfg, _ := serve(t, fakeapi.Options{})
	check(t, jsonCfg.Host, "/api/v1/namespaces/ns/pods", "application/vnd.kubernetes.protobuf,application/json", "application/json", false)
}

// check GETs path with an Accept header and checks the answer's type.
func check(t *testing.T, host, path, accept, wantType string, wantProto bool) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := resp.Header.Get("Content-Type"); got != wantType || bytes.HasPrefix(body, []byte("k8s\x00")) != wantProto {
		t.Errorf("GET %s, Accept %s: Content-Type %s, body %q; want %s", path, accept, got, body[:min(len(body), 12)], wantType)
	}
}

// With Options.Protobuf, a typed clientset's watch of pods streams
// protobuf: events and an in-stream error reach it decoded.
func TestProtobufWatch(t *testing.T) {
	ctx := t.Context()
	srv, _, cs := serve(t, fakeapi.Options{Protobuf: true})
	w, err := cs.CoreV1().Pods("ns").Watch(ctx, metav1.ListOptions{ResourceVersion: srv.ResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := srv.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if pod, ok := ev.Object.(*corev1.Pod); ev.Type != watch.Added || !ok || pod.Name != "p" || pod.ResourceVersion != srv.ResourceVersion() {
			t.Errorf("event %s %#v, want ADDED p at RV %s", ev.Type, ev.Object, srv.ResourceVersion())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no event")
	}

	if err := srv.FailNext(fake.Failure{Verbs: fake.VerbWatch, Times: 1, Kind: fake.Expired, InStream: true}); err != nil {
		t.Fatal(err)
	}
	w2, err := cs.CoreV1().Pods("ns").Watch(ctx, metav1.ListOptions{ResourceVersion: srv.ResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	select {
	case ev := <-w2.ResultChan():
		if st, ok := ev.Object.(*metav1.Status); ev.Type != watch.Error || !ok || st.Code != http.StatusGone {
			t.Errorf("event %s %#v, want ERROR with a 410 Status", ev.Type, ev.Object)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no event")
	}
}
