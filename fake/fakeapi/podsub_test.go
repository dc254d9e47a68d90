package fakeapi_test

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
)

// pods/binding assigns a pod to a node once; pods/eviction deletes a pod
// unless a PodDisruptionBudget that selects it allows no disruption, and
// charges the budget that allows one, as kube-apiserver's pod registry.
func TestPodBindingAndEviction(t *testing.T) {
	ctx := t.Context()
	pdbs := fake.Resource{GVR: policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"), Kind: "PodDisruptionBudget", Namespaced: true}
	srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{fake.Pods(), pdbs}})
	for _, protobuf := range []bool{false, true} {
		cs := kubernetes.NewForConfigOrDie(fakeapi.ServeTest(t, srv, fakeapi.Options{Protobuf: protobuf}))
		ns := "json"
		if protobuf {
			ns = "proto"
		}
		pods := cs.CoreV1().Pods(ns)
		for _, name := range []string{"free", "guarded"} {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": name}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
			if _, err := srv.Create(ctx, p); err != nil {
				t.Fatal(err)
			}
		}

		bind := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "free", Annotations: map[string]string{"a": "1"}}, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}
		if err := pods.Bind(ctx, bind, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := pods.Get(ctx, "free", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.NodeName != "n1" || got.Annotations["a"] != "1" || len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != corev1.PodScheduled {
			t.Errorf("%s: bound pod: node %q annotations %v conditions %v", ns, got.Spec.NodeName, got.Annotations, got.Status.Conditions)
		}
		err = pods.Bind(ctx, bind, metav1.CreateOptions{})
		wantStatus(t, ns+": second binding", err, http.StatusConflict, metav1.StatusReasonConflict)
		err = pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "guarded"}}, metav1.CreateOptions{})
		wantStatus(t, ns+": binding without a target", err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)

		evictions := cs.PolicyV1().Evictions(ns)
		if err := evictions.Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "free"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := pods.Get(ctx, "free", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the evicted pod: %v, want NotFound", ns, err)
		}
		err = evictions.Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gone"}})
		wantStatus(t, ns+": eviction of a missing pod", err, http.StatusNotFound, metav1.StatusReasonNotFound)

		pdb := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "budget"},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
		}
		stored, err := srv.Create(ctx, pdb)
		if err != nil {
			t.Fatal(err)
		}
		err = evictions.Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "guarded"}})
		wantStatus(t, ns+": eviction against a budget", err, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests)
		pdb = stored.(*policyv1.PodDisruptionBudget)
		pdb.Status.DisruptionsAllowed = 1
		if _, err := srv.Update(ctx, pdb); err != nil {
			t.Fatal(err)
		}
		if err := evictions.Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "guarded"}}); err != nil {
			t.Fatal(err)
		}
		after, err := srv.Get(ctx, pdbs.GVR, ns, "budget")
		if err != nil {
			t.Fatal(err)
		}
		if st := after.(*policyv1.PodDisruptionBudget).Status; st.DisruptionsAllowed != 0 || !hasKey(st.DisruptedPods, "guarded") {
			t.Errorf("%s: the budget after the eviction: %+v, want no disruption left and guarded disrupted", ns, st)
		}
	}
}

func hasKey(m map[string]metav1.Time, k string) bool {
	_, ok := m[k]
	return ok
}
