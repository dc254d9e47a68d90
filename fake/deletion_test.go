package fake

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var dryRunAll = []string{metav1.DryRunAll}

// TestDeleteWithFinalizersMarksThenUpdateDeletes follows an object with a
// finalizer through a delete (marked, MODIFIED), a second delete (no
// write), a refused new finalizer, and the update that removes the last
// finalizer (DELETED with the last stored state).
func TestDeleteWithFinalizersMarksThenUpdateDeletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(t, Options{})
		ctx := t.Context()
		pod := newPod("ns", "a", nil)
		pod.Finalizers = []string{"example.com/hold"}
		a := mustCreate(t, srv, pod).(*corev1.Pod) // RV 1
		w, err := srv.ListerWatcher(LWOptions{Resource: podsGVR}).WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: a.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()

		out, deleted, err := srv.DeleteWith(ctx, newPod("ns", "a", nil), metav1.DeleteOptions{})
		if err != nil || deleted {
			t.Fatalf("DeleteWith: deleted %v, %v; want kept", deleted, err)
		}
		marked := out.(*corev1.Pod)
		if marked.ResourceVersion != "2" || marked.DeletionTimestamp == nil || !marked.DeletionTimestamp.Time.Equal(time.Now().Truncate(time.Second)) ||
			marked.DeletionGracePeriodSeconds == nil || *marked.DeletionGracePeriodSeconds != 0 {
			t.Fatalf("marked: rv %s, deletionTimestamp %v, grace %v; want RV 2, now, 0", marked.ResourceVersion, marked.DeletionTimestamp, marked.DeletionGracePeriodSeconds)
		}
		if _, deleted, err := srv.DeleteWith(ctx, newPod("ns", "a", nil), metav1.DeleteOptions{}); err != nil || deleted || srv.ResourceVersion() != "2" {
			t.Fatalf("second delete: deleted %v, %v, server at %s; want no write", deleted, err, srv.ResourceVersion())
		}

		more := marked.DeepCopy()
		more.Finalizers = append(more.Finalizers, "example.com/more")
		_, err = srv.Update(ctx, more)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/more"}`) {
			t.Fatalf("adding a finalizer: %v; want 422 Forbidden on metadata.finalizers", err)
		}
		clear := marked.DeepCopy()
		clear.Finalizers = nil
		clear.DeletionTimestamp = nil // an update cannot remove it
		up, err := srv.Update(ctx, clear)
		if err != nil {
			t.Fatal(err)
		}
		if m := up.(*corev1.Pod); m.ResourceVersion != "2" || m.DeletionTimestamp == nil || len(m.Finalizers) != 0 {
			t.Errorf("update answer: %+v; want the object as written, at RV 2", m.ObjectMeta)
		}
		if _, err := srv.Get(ctx, podsGVR, "ns", "a"); !apierrors.IsNotFound(err) {
			t.Errorf("get after the last finalizer went: %v; want NotFound", err)
		}
		evs, _ := drain(w)
		equalStrings(t, "events", evs, []string{"MODIFIED ns/a@2", "DELETED ns/a@3"})
	})
}

func TestDeletePropagationPolicyFinalizers(t *testing.T) {
	srv := newTestServer(t, Options{})
	ctx := t.Context()
	for _, tc := range []struct {
		policy metav1.DeletionPropagation
		have   []string
		want   []string // nil: deleted
	}{
		{metav1.DeletePropagationOrphan, nil, []string{metav1.FinalizerOrphanDependents}},
		{metav1.DeletePropagationForeground, []string{"x.io/a", metav1.FinalizerOrphanDependents}, []string{"x.io/a", metav1.FinalizerDeleteDependents}},
		{metav1.DeletePropagationBackground, []string{metav1.FinalizerOrphanDependents}, nil},
		{metav1.DeletePropagationBackground, []string{"x.io/a"}, []string{"x.io/a"}},
	} {
		pod := newPod("ns", "p", nil)
		pod.Finalizers = tc.have
		mustCreate(t, srv, pod)
		out, deleted, err := srv.DeleteWith(ctx, newPod("ns", "p", nil), metav1.DeleteOptions{PropagationPolicy: &tc.policy})
		if err != nil {
			t.Fatal(err)
		}
		got := out.(*corev1.Pod).Finalizers
		if tc.want == nil {
			if !deleted {
				t.Errorf("%s with %v: kept with %v; want deleted", tc.policy, tc.have, got)
			}
			continue
		}
		if deleted || strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s with %v: deleted %v, finalizers %v; want kept with %v", tc.policy, tc.have, deleted, got, tc.want)
		}
		// Leave the next case a clean slate.
		cur, _ := srv.Get(ctx, podsGVR, "ns", "p")
		cur.(*corev1.Pod).Finalizers = nil
		mustUpdate(t, srv, cur)
	}
	bogus := metav1.DeletionPropagation("Bogus")
	mustCreate(t, srv, newPod("ns", "q", nil))
	_, _, err := srv.DeleteWith(ctx, newPod("ns", "q", nil), metav1.DeleteOptions{PropagationPolicy: &bogus})
	if !apierrors.IsInvalid(err) || !strings.HasPrefix(err.Error(), `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Bogus"`) {
		t.Errorf("bogus policy: %v; want 422 on DeleteOptions", err)
	}
}

// TestDryRunWritesNothing: each verb's dry run answers what it would write
// and leaves the server's objects, resource version, names and events as
// they were.
func TestDryRunWritesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(t, Options{})
		ctx := t.Context()
		a := mustCreate(t, srv, newPod("ns", "a", nil)).(*corev1.Pod)
		w, err := srv.ListerWatcher(LWOptions{Resource: podsGVR}).WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: a.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()

		gen := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: "g-"}}
		dry, err := srv.CreateWith(ctx, gen, metav1.CreateOptions{DryRun: dryRunAll})
		if err != nil {
			t.Fatal(err)
		}
		if m := dry.(*corev1.Pod); m.ResourceVersion != "" || m.UID == "" || m.Name == "" || m.CreationTimestamp.IsZero() {
			t.Errorf("dry-run create: %+v; want a name, uid and timestamp, no resourceVersion", m.ObjectMeta)
		}
		real := mustCreate(t, srv, gen).(*corev1.Pod)
		if real.Name != dry.(*corev1.Pod).Name || real.UID != dry.(*corev1.Pod).UID {
			t.Errorf("create after a dry run: %s %s; want the name and UID the dry run showed (%s %s)", real.Name, real.UID, dry.(*corev1.Pod).Name, dry.(*corev1.Pod).UID)
		}
		// A set resourceVersion fails a create (500) but not its dry run,
		// which answers it as sent (controller-runtime's DryRunClient spec
		// "should not create an object" dry-runs a copy of a stored object).
		withRV := newPod("ns", "b", nil)
		withRV.ResourceVersion = a.ResourceVersion
		if out, err := srv.CreateWith(ctx, withRV, metav1.CreateOptions{DryRun: dryRunAll}); err != nil || out.(*corev1.Pod).ResourceVersion != a.ResourceVersion {
			t.Errorf("dry-run create with resourceVersion %s: %v, %v; want it answered as sent", a.ResourceVersion, describe(out), err)
		}
		if _, err := srv.Create(ctx, withRV); err == nil || err.Error() != "resourceVersion should not be set on objects to be created" {
			t.Errorf("create with resourceVersion: %v; want the 500", err)
		}
		if _, err := srv.CreateWith(ctx, newPod("ns", "a", nil), metav1.CreateOptions{DryRun: dryRunAll}); !apierrors.IsAlreadyExists(err) {
			t.Errorf("dry-run create of an existing name: %v; want AlreadyExists", err)
		}

		changed := a.DeepCopy()
		changed.Labels = map[string]string{"k": "v"}
		out, err := srv.UpdateWith(ctx, changed, metav1.UpdateOptions{DryRun: dryRunAll})
		if err != nil {
			t.Fatal(err)
		}
		if m := out.(*corev1.Pod); m.ResourceVersion != a.ResourceVersion || m.Labels["k"] != "v" {
			t.Errorf("dry-run update: %+v; want the labels at the stored RV %s", m.ObjectMeta, a.ResourceVersion)
		}
		gone, deleted, err := srv.DeleteWith(ctx, newPod("ns", "a", nil), metav1.DeleteOptions{DryRun: dryRunAll})
		if err != nil || !deleted || gone.(*corev1.Pod).ResourceVersion != a.ResourceVersion {
			t.Errorf("dry-run delete: %v deleted %v, %v; want deleted at RV %s", describe(gone), deleted, err, a.ResourceVersion)
		}
		if _, err := srv.DeleteCollectionWith(ctx, podsGVR, "ns", metav1.DeleteOptions{DryRun: dryRunAll}, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := srv.CreateWith(ctx, gen, metav1.CreateOptions{DryRun: []string{"Some"}}); !apierrors.IsInvalid(err) ||
			err.Error() != `CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"` {
			t.Errorf("dryRun=Some: %v; want 422 on CreateOptions", err)
		}
		cur, err := srv.Get(ctx, podsGVR, "ns", "a")
		if err != nil || cur.(*corev1.Pod).ResourceVersion != a.ResourceVersion || cur.(*corev1.Pod).Labels != nil {
			t.Errorf("after the dry runs: %v, %v; want a unchanged", cur, err)
		}
		evs, _ := drain(w)
		equalStrings(t, "events", evs, []string{"ADDED " + describe(real)})
	})
}

func TestCreateDropsDeletionFields(t *testing.T) {
	srv := newTestServer(t, Options{})
	now := metav1.Now()
	var g int64 = 30
	pod := newPod("ns", "a", nil)
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &now, &g
	var out runtime.Object = mustCreate(t, srv, pod)
	if m := out.(*corev1.Pod); m.DeletionTimestamp != nil || m.DeletionGracePeriodSeconds != nil {
		t.Errorf("created with %v/%v; want both dropped", m.DeletionTimestamp, m.DeletionGracePeriodSeconds)
	}
}

func TestDeleteCollectionHonoursFinalizers(t *testing.T) {
	srv := newTestServer(t, Options{})
	ctx := t.Context()
	held := newPod("ns", "held", nil)
	held.Finalizers = []string{"x.io/a"}
	mustCreate(t, srv, held)
	mustCreate(t, srv, newPod("ns", "free", nil))
	if _, err := srv.DeleteCollection(ctx, podsGVR, "ns", metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := srv.ListerWatcher(LWOptions{Resource: podsGVR}).ListWithContext(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	items := list.(*corev1.PodList).Items
	if len(items) != 1 || items[0].Name != "held" || items[0].DeletionTimestamp == nil {
		t.Errorf("after deletecollection: %s; want only held, marked", listKeys(t, list))
	}
}

// TestDeleteNamespace: the namespace's objects go (one held by a
// finalizer stays, marked), creates there are refused while it
// terminates, and the namespace goes with its last object.
func TestDeleteNamespace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(t, Options{RequireNamespaces: true})
		ctx := t.Context()
		for _, ns := range []string{"ns", "other"} {
			if err := srv.CreateNamespace(ctx, ns); err != nil {
				t.Fatal(err)
			}
		}
		held := newPod("ns", "held", nil)
		held.Finalizers = []string{"x.io/a"}
		mustCreate(t, srv, held)
		mustCreate(t, srv, newPod("ns", "free", nil))
		mustCreate(t, srv, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}})
		keep := mustCreate(t, srv, newPod("other", "keep", nil))
		w, err := srv.ListerWatcher(LWOptions{Resource: podsGVR}).WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: srv.ResourceVersion()})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()

		if err := srv.DeleteNamespace(ctx, "ns"); err != nil {
			t.Fatal(err)
		}
		evs, _ := drain(w)
		equalStrings(t, "pod events", evs, []string{"DELETED ns/free@5", "MODIFIED ns/held@6"})
		if _, err := srv.Get(ctx, ConfigMaps().GVR, "ns", "c"); !apierrors.IsNotFound(err) {
			t.Errorf("configmap after the namespace's deletion: %v; want NotFound", err)
		}
		_, err = srv.Create(ctx, newPod("ns", "new", nil))
		if !apierrors.IsForbidden(err) || err.Error() != `pods "new" is forbidden: unable to create new content in namespace ns because it is being terminated` {
			t.Errorf("create in a terminating namespace: %v; want 403", err)
		}
		if err := srv.CreateNamespace(ctx, "ns"); !apierrors.IsAlreadyExists(err) {
			t.Errorf("CreateNamespace of a terminating one: %v; want AlreadyExists", err)
		}

		cur, _ := srv.Get(ctx, podsGVR, "ns", "held")
		cur.(*corev1.Pod).Finalizers = nil
		mustUpdate(t, srv, cur)
		_, err = srv.Create(ctx, newPod("ns", "new", nil))
		if !apierrors.IsNotFound(err) || err.Error() != `namespaces "ns" not found` {
			t.Errorf("create after the namespace went: %v; want 404 on the namespace", err)
		}
		if _, err := srv.Get(ctx, podsGVR, "other", "keep"); err != nil {
			t.Errorf("other namespace's pod %s: %v", describe(keep), err)
		}
		if err := srv.DeleteNamespace(ctx, "never"); !apierrors.IsNotFound(err) {
			t.Errorf("DeleteNamespace of an unknown namespace: %v; want NotFound", err)
		}
		if err := srv.CreateNamespace(ctx, "ns"); err != nil {
			t.Errorf("CreateNamespace after it went: %v", err)
		}
	})
}
