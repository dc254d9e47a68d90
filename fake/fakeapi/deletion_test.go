package fakeapi_test

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/listwatch/listwatch/fake/fakeapi"
)

// nextEvent receives one event, failing the test if the watch ends.
func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	ev, ok := <-w.ResultChan()
	if !ok {
		t.Fatal("watch ended")
	}
	return ev
}

// createWatched creates cm and returns it with a watch from its resource
// version, stopped when the test ends.
func createWatched(t *testing.T, cms typedcorev1.ConfigMapInterface, cm *corev1.ConfigMap) (*corev1.ConfigMap, watch.Interface) {
	t.Helper()
	out, err := cms.Create(t.Context(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(t.Context(), metav1.ListOptions{ResourceVersion: out.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return out, w
}

// A dry run of every write answers what it would write, and the fake
// holds and sends nothing new: the next event a watch gets is a later
// real write's.
func TestDryRun(t *testing.T) {
	ctx := t.Context()
	srv, _, cs := serve(t, fakeapi.Options{})
	cms := cs.CoreV1().ConfigMaps("ns")
	base, w := createWatched(t, cms, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}})
	dry := []string{metav1.DryRunAll}

	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "b-"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{DryRun: dry})
	if err != nil {
		t.Fatal(err)
	}
	if created.Name == "" || created.UID == "" || created.CreationTimestamp.IsZero() || created.ResourceVersion != "" || created.Data["k"] != "v" {
		t.Errorf("dry-run create answered %+v; want a generated name, uid, timestamp and no resourceVersion", created.ObjectMeta)
	}
	changed := base.DeepCopy()
	changed.Data = map[string]string{"k": "v"}
	updated, err := cms.Update(ctx, changed, metav1.UpdateOptions{DryRun: dry})
	if err != nil || updated.ResourceVersion != base.ResourceVersion || updated.Data["k"] != "v" {
		t.Errorf("dry-run update: %v, %v; want the new data at RV %s", updated, err, base.ResourceVersion)
	}
	patched, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"p":"q"}}`), metav1.PatchOptions{DryRun: dry})
	if err != nil || patched.ResourceVersion != base.ResourceVersion || patched.Data["p"] != "q" {
		t.Errorf("dry-run patch: %v, %v; want the patched data at RV %s", patched, err, base.ResourceVersion)
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{DryRun: dry}); err != nil {
		t.Errorf("dry-run delete: %v", err)
	}
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{DryRun: dry}, metav1.ListOptions{}); err != nil {
		t.Errorf("dry-run delete collection: %v", err)
	}
	_, err = cms.Update(ctx, changed, metav1.UpdateOptions{DryRun: []string{"Some"}})
	wantStatus(t, "dryRun=Some", err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	if want := `UpdateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"`; err == nil || err.Error() != want {
		t.Errorf("dryRun=Some: %v; want %s", err, want)
	}

	got, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != base.ResourceVersion || got.Data != nil || srv.ResourceVersion() != base.ResourceVersion {
		t.Fatalf("after the dry runs: %v, %v, server at %s; want a unchanged at %s", got, err, srv.ResourceVersion(), base.ResourceVersion)
	}
	sentinel, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "z"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, w); ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != sentinel.Name {
		t.Errorf("first event after the dry runs: %s %v; want ADDED z", ev.Type, ev.Object)
	}
}

// A delete of an object with a finalizer answers it marked, with a
// MODIFIED event; the patch that removes the finalizer deletes it.
func TestFinalizersOverREST(t *testing.T) {
	ctx := t.Context()
	_, _, cs := serve(t, fakeapi.Options{})
	cms := cs.CoreV1().ConfigMaps("ns")
	base, w := createWatched(t, cms, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Finalizers: []string{"example.com/hold"}}})
	// client-go's Delete drops the body; read it with the REST client.
	var marked corev1.ConfigMap
	res := cs.CoreV1().RESTClient().Delete().Namespace("ns").Resource("configmaps").Name("a").Body(&metav1.DeleteOptions{}).Do(ctx)
	var code int
	res.StatusCode(&code)
	if err := res.Into(&marked); err != nil {
		t.Fatal(err)
	}
	if code != http.StatusOK || marked.DeletionTimestamp == nil || *marked.DeletionGracePeriodSeconds != 0 || marked.ResourceVersion == base.ResourceVersion {
		t.Fatalf("delete answered %d %+v; want 200 and the object marked at a new RV", code, marked.ObjectMeta)
	}
	if ev := nextEvent(t, w); ev.Type != watch.Modified || ev.Object.(*corev1.ConfigMap).DeletionTimestamp == nil {
		t.Errorf("event after the delete: %s; want MODIFIED with a deletionTimestamp", ev.Type)
	}
	if _, err := cms.Patch(ctx, "a", types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/finalizers/-","value":"example.com/more"}]`), metav1.PatchOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("adding a finalizer to a deleting object: %v; want 422", err)
	}
	out, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil || len(out.Finalizers) != 0 {
		t.Fatalf("removing the finalizer: %v, %v", out, err)
	}
	if ev := nextEvent(t, w); ev.Type != watch.Deleted {
		t.Errorf("event after the last finalizer went: %s; want DELETED", ev.Type)
	}
	if _, err := cms.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get: %v; want NotFound", err)
	}
	orphan := metav1.DeletePropagationOrphan
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "o"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "o", metav1.DeleteOptions{PropagationPolicy: &orphan}); err != nil {
		t.Fatal(err)
	}
	if got, err := cms.Get(ctx, "o", metav1.GetOptions{}); err != nil || len(got.Finalizers) != 1 || got.Finalizers[0] != metav1.FinalizerOrphanDependents {
		t.Errorf("after an Orphan delete: %v, %v; want kept with the orphan finalizer", got, err)
	}
}
