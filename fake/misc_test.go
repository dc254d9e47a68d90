package fake

import (
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestClearFaultsRemovesEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, lw := seeded(t, Options{})
		mustNoErr(t, srv.FailNext(Failure{Times: 5, Kind: InternalError}))
		mustNoErr(t, srv.InjectWatchFault(WatchFault{CloseAfterEvents: 1}))
		srv.Stall(GVR{})
		srv.ClearFaults()
		if _, err := lw.List(metav1.ListOptions{}); err != nil {
			t.Fatalf("list after ClearFaults: %v", err)
		}
		w2, err := lw.Watch(metav1.ListOptions{ResourceVersion: "5"})
		mustNoErr(t, err)
		defer w2.Stop()
		mustCreate(t, srv, newPod("ns", "d", nil))
		mustCreate(t, srv, newPod("ns", "e", nil))
		got, closed := drain(w2)
		if len(got) != 2 || closed {
			t.Errorf("watch after ClearFaults: %q closed=%v", got, closed)
		}
	})
}

func TestErrWatcherStopIsHarmless(t *testing.T) {
	srv, lw := seeded(t, Options{})
	mustNoErr(t, srv.Compact("5"))
	w, err := lw.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "1"})
	mustNoErr(t, err)
	w.Stop()
	w.Stop()
	if ev, ok := <-w.ResultChan(); !ok || ev.Type != "ERROR" {
		t.Errorf("first event %v %v", ev, ok)
	}
}

func TestContinueTokenValidation(t *testing.T) {
	_, lw := seeded(t, Options{})
	for name, tok := range map[string]string{
		"wrong version": encodeContinueRaw(`{"v":"meta.k8s.io/v2","rv":3,"start":"a"}`),
		"zero rv":       encodeContinueRaw(`{"v":"meta.k8s.io/v1","rv":0,"start":"a"}`),
		"empty start":   encodeContinueRaw(`{"v":"meta.k8s.io/v1","rv":3,"start":""}`),
		"not json":      encodeContinueRaw(`nope`),
	} {
		if _, err := lw.ListWithContext(t.Context(), metav1.ListOptions{Continue: tok}); !apierrors.IsBadRequest(err) {
			t.Errorf("%s: %v; want BadRequest", name, err)
		}
	}
}

func TestAdmitRejectsMismatchedObjects(t *testing.T) {
	cluster := Resource{GVR: GVR{Version: "v1", Resource: "namespaces"}, Kind: "Namespace"}
	widgetsRes := Resource{GVR: widgets, Kind: "Widget", Namespaced: true, Unstructured: true}
	srv := newTestServer(t, Options{Resources: []Resource{cluster, widgetsRes}})
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "oops"}}
	if _, err := srv.Create(ctx, ns); !apierrors.IsInvalid(err) {
		t.Errorf("cluster-scoped object with a namespace: %v; want Invalid", err)
	}
	u := &unstructured.Unstructured{}
	u.SetName("w")
	if _, err := srv.Create(ctx, u); !apierrors.IsBadRequest(err) {
		t.Errorf("unstructured without kind: %v; want BadRequest", err)
	}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Widget")
	if _, err := srv.Create(ctx, u); !apierrors.IsInvalid(err) {
		t.Errorf("namespaced widget without namespace: %v; want Invalid", err)
	}
	if _, err := srv.Get(ctx, widgets, "ns", "missing"); !apierrors.IsNotFound(err) {
		t.Errorf("Get missing: %v", err)
	}
	if _, err := srv.Get(ctx, podsGVR, "ns", "x"); !apierrors.IsNotFound(err) {
		t.Errorf("Get unserved resource: %v", err)
	}
}
