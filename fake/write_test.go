package fake

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWritesAssignGlobalResourceVersions(t *testing.T) {
	srv := newTestServer(t, Options{InitialResourceVersion: 10})
	a := mustCreate(t, srv, newPod("ns", "a", nil)).(*corev1.Pod)
	cm := mustCreate(t, srv, &corev1.ConfigMap{ObjectMeta: newPod("ns", "c", nil).ObjectMeta}).(*corev1.ConfigMap)
	if a.ResourceVersion != "11" || cm.ResourceVersion != "12" || srv.ResourceVersion() != "12" {
		t.Fatalf("RVs: pod %s, configmap %s, server %s; want 11, 12, 12", a.ResourceVersion, cm.ResourceVersion, srv.ResourceVersion())
	}
	if a.UID == "" || a.CreationTimestamp.IsZero() {
		t.Errorf("create did not set UID/creationTimestamp: %+v", a.ObjectMeta)
	}
	a.Labels = map[string]string{"x": "y"}
	up := mustUpdate(t, srv, a).(*corev1.Pod)
	if up.ResourceVersion != "13" || up.UID != a.UID {
		t.Errorf("update: rv %s uid %s; want 13 and the original UID", up.ResourceVersion, up.UID)
	}
	same := mustUpdate(t, srv, up).(*corev1.Pod)
	if same.ResourceVersion != "13" || srv.ResourceVersion() != "13" {
		t.Errorf("no-op update moved the RV to %s/%s", same.ResourceVersion, srv.ResourceVersion())
	}
	gone := mustDelete(t, srv, newPod("ns", "a", nil)).(*corev1.Pod)
	if gone.ResourceVersion != "14" || gone.Labels["x"] != "y" {
		t.Errorf("delete returned %+v; want last state at RV 14", gone.ObjectMeta)
	}
}

func TestWriteErrorsAreStatusErrors(t *testing.T) {
	srv := newTestServer(t, Options{})
	ctx := t.Context()
	a := mustCreate(t, srv, newPod("ns", "a", nil)).(*corev1.Pod)
	_, err := srv.Create(ctx, newPod("ns", "a", nil))
	if !apierrors.IsAlreadyExists(err) {
		t.Errorf("duplicate create: %v; want AlreadyExists", err)
	}
	_, err = srv.Update(ctx, newPod("ns", "missing", nil))
	if !apierrors.IsNotFound(err) {
		t.Errorf("update missing: %v; want NotFound", err)
	}
	_, err = srv.Delete(ctx, newPod("ns", "missing", nil))
	if !apierrors.IsNotFound(err) {
		t.Errorf("delete missing: %v; want NotFound", err)
	}
	stale := a.DeepCopy() // at RV 1
	a.Labels = map[string]string{"v": "2"}
	mustUpdate(t, srv, a)
	_, err = srv.Update(ctx, stale)
	if !apierrors.IsConflict(err) {
		t.Errorf("stale update: %v; want Conflict", err)
	}
	_, err = srv.Delete(ctx, stale)
	if !apierrors.IsConflict(err) {
		t.Errorf("stale delete: %v; want Conflict", err)
	}
	_, err = srv.Create(ctx, newPod("", "a", nil))
	if !apierrors.IsInvalid(err) {
		t.Errorf("pod without namespace: %v; want Invalid", err)
	}
	_, err = srv.Create(ctx, &corev1.Node{})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("unserved kind: %v; want BadRequest", err)
	}
	_, err = srv.Create(ctx, nil)
	if !apierrors.IsBadRequest(err) {
		t.Errorf("nil object: %v; want BadRequest", err)
	}
}

func TestObjectsAreCopiedInAndOut(t *testing.T) {
	srv := newTestServer(t, Options{})
	in := newPod("ns", "a", map[string]string{"k": "v"})
	out := mustCreate(t, srv, in).(*corev1.Pod)
	in.Labels["k"] = "changed-in"
	out.Labels["k"] = "changed-out"
	got, err := srv.Get(t.Context(), podsGVR, "ns", "a")
	if err != nil {
		t.Fatal(err)
	}
	if l := got.(*corev1.Pod).Labels["k"]; l != "v" {
		t.Errorf("stored label = %q; the server shares memory with a caller", l)
	}
}

func TestCreateDetails(t *testing.T) {
	srv := newTestServer(t, Options{})
	ctx := t.Context()
	gen := &corev1.Pod{}
	gen.Namespace, gen.GenerateName = "ns", "web-"
	out := mustCreate(t, srv, gen).(*corev1.Pod)
	if out.Name != "web-00001" {
		t.Errorf("generated name %q", out.Name)
	}
	withRV := newPod("ns", "b", nil)
	withRV.ResourceVersion = "3"
	if _, err := srv.Create(ctx, withRV); errStatus(err).Code != 500 {
		t.Errorf("create with resourceVersion: %v; want a bare 500", err)
	}
	wrongUID := newPod("ns", "web-00001", nil)
	wrongUID.UID = "other"
	if _, err := srv.Delete(ctx, wrongUID); !apierrors.IsConflict(err) {
		t.Errorf("delete with wrong UID: %v; want Conflict", err)
	}
	if err := srv.Compact("999"); err != nil || srv.CompactedResourceVersion() != "1" {
		t.Errorf("Compact beyond the current RV: err %v, compacted %s; want capped at 1", err, srv.CompactedResourceVersion())
	}
	if err := srv.Compact("x"); err == nil {
		t.Errorf("Compact(\"x\") accepted")
	}
}

// DeleteCollection deletes what its selectors match, one write each, and
// returns the deleted objects as they were, in a list at the RV before.
func TestDeleteCollection(t *testing.T) {
	srv := newTestServer(t, Options{InitialResourceVersion: 10})
	mustCreate(t, srv, newPod("ns", "a", map[string]string{"app": "web"}))
	mustCreate(t, srv, newPod("ns", "b", map[string]string{"app": "db"}))
	mustCreate(t, srv, newPod("ns", "c", map[string]string{"app": "web"}))
	mustCreate(t, srv, newPod("other", "d", map[string]string{"app": "web"}))
	w, err := srv.ListerWatcher(LWOptions{Resource: podsGVR, Namespace: "ns"}).WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "14"})
	if err != nil {
		t.Fatal(err)
	}
	list, err := srv.DeleteCollection(t.Context(), podsGVR, "ns", metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	pods := list.(*corev1.PodList)
	if got := listKeys(t, list); got != "rv=14 [ns/a@11 ns/c@13]" || len(pods.Items) != 2 {
		t.Errorf("deleted %s, want rv=14 [ns/a@11 ns/c@13]", got)
	}
	if srv.ResourceVersion() != "16" {
		t.Errorf("server at RV %s, want 16 (one write per delete)", srv.ResourceVersion())
	}
	left, err := srv.ListerWatcher(LWOptions{Resource: podsGVR}).ListWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := listKeys(t, left); got != "rv=16 [ns/b@12 other/d@14]" {
		t.Errorf("left %s, want rv=16 [ns/b@12 other/d@14]", got)
	}
	var evs []string
	for range 2 {
		evs = append(evs, describeEvent(<-w.ResultChan()))
	}
	w.Stop()
	equalStrings(t, "events", evs, []string{"DELETED ns/a@15", "DELETED ns/c@16"})
	if _, err := srv.DeleteCollection(t.Context(), podsGVR, "ns", metav1.ListOptions{LabelSelector: "=bad"}); !apierrors.IsBadRequest(err) {
		t.Errorf("bad selector: %v, want 400", err)
	}
	if _, err := srv.DeleteCollection(t.Context(), GVR{Version: "v1", Resource: "secrets"}, "", metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("unserved resource: %v, want 404", err)
	}
}
