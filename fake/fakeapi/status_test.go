package fakeapi_test

import (
	"fmt"
	"net/http"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
)

// A resource with the status subresource: writes to the object keep the
// stored status, writes to /status change only the status; a resource
// without one has no /status.
func TestStatusSubresource(t *testing.T) {
	ctx := t.Context()
	srv, cfg, cs := serve(t, fakeapi.Options{})
	pods := cs.CoreV1().Pods("ns")
	if _, err := srv.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}); err != nil {
		t.Fatal(err)
	}
	phase := func() corev1.PodPhase { return stored(t, srv, "ns", "p").Status.Phase }
	labels := func() map[string]string { return stored(t, srv, "ns", "p").Labels }

	pod, err := pods.Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A typed /status write takes the status and the metadata, as the
	// pod status strategy does (but for owner references), and keeps the
	// spec.
	pod.Status.Phase = corev1.PodRunning
	pod.Labels = map[string]string{"via": "status"}
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "u"}}
	pod.Spec.NodeName = "n"
	pod, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := stored(t, srv, "ns", "p"); p.Status.Phase != corev1.PodRunning || p.Labels["via"] != "status" || p.OwnerReferences != nil || p.Spec.NodeName != "" {
		t.Errorf("after UpdateStatus: phase %q labels %v owners %v node %q, want Running, via=status, no owners, no node", p.Status.Phase, p.Labels, p.OwnerReferences, p.Spec.NodeName)
	}

	pod.Status.Phase = corev1.PodFailed
	pod.Labels = map[string]string{"via": "update"}
	if _, err := pods.Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if phase() != corev1.PodRunning || labels()["via"] != "update" {
		t.Errorf("after Update: phase %q labels %v, want Running and via=update", phase(), labels())
	}

	if _, err := pods.Patch(ctx, "p", types.MergePatchType, []byte(`{"status":{"phase":"Succeeded"}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Patch(ctx, "p", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"p":"1"}},"status":{"phase":"Unknown"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if phase() != corev1.PodSucceeded || labels()["p"] != "1" {
		t.Errorf("after the patches: phase %q labels %v, want Succeeded and p=1", phase(), labels())
	}

	// A stale resourceVersion on /status conflicts as on the object.
	_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	wantStatus(t, "stale UpdateStatus", err, http.StatusConflict, metav1.StatusReasonConflict)

	code, st := do(t, cfg, "PUT", "/api/v1/namespaces/ns/configmaps/c/status", "application/json", []byte(`{}`))
	if code != http.StatusNotFound || st.Reason != metav1.StatusReasonNotFound {
		t.Errorf("configmap /status: %d %+v, want 404", code, st)
	}

	// Discovery lists pods/status, and no configmaps/status.
	rl, err := discovery.NewDiscoveryClientForConfigOrDie(cfg).ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rl.APIResources {
		names = append(names, r.Name)
	}
	if want := []string{"pods", "pods/status", "pods/binding", "pods/eviction", "configmaps", "nodes", "nodes/status"}; fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("v1 discovery lists %v, want %v", names, want)
	}

	// An unstructured resource has it when its Resource says so.
	gadgets := fake.Resource{GVR: widgets.GVR.GroupVersion().WithResource("gadgets"), Kind: "Gadget", Namespaced: true, Unstructured: true, StatusSubresource: true}
	srv2 := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{gadgets}})
	dyn := dynamic.NewForConfigOrDie(fakeapi.ServeTest(t, srv2, fakeapi.Options{})).Resource(gadgets.GVR).Namespace("ns")
	g := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g"},
		"spec":     map[string]any{"size": int64(1)},
	}}
	g, err = dyn.Create(ctx, g, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g.Object["status"] = map[string]any{"ready": true}
	g.Object["spec"] = map[string]any{"size": int64(2)}
	g, err = dyn.UpdateStatus(ctx, g, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready, _, _ := unstructured.NestedBool(g.Object, "status", "ready")
	size, _, _ := unstructured.NestedInt64(g.Object, "spec", "size")
	if !ready || size != 1 {
		t.Errorf("after UpdateStatus: %v, want status.ready and spec.size 1", g.Object)
	}
}

// A deployment's /status write keeps the stored labels (the deployment
// status strategy resets them with the spec) and takes the annotations,
// as controller-runtime's "StatusClient with metadata objects should patch
// status" spec expects of kube-apiserver.
func TestDeploymentStatusKeepsLabels(t *testing.T) {
	ctx := t.Context()
	deployments := fake.Resource{GVR: appsv1.SchemeGroupVersion.WithResource("deployments"), Kind: "Deployment", Namespaced: true}
	srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{deployments}})
	cs := kubernetes.NewForConfigOrDie(fakeapi.ServeTest(t, srv, fakeapi.Options{}))
	dc := cs.AppsV1().Deployments("ns")
	if _, err := dc.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Labels: map[string]string{"a": "1"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"metadata":{"labels":{"a":"2"},"annotations":{"k":"v"}},"spec":{"paused":true},"status":{"replicas":3}}`)
	if _, err := dc.Patch(ctx, "d", types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	d, err := dc.Get(ctx, "d", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Labels["a"] != "1" || d.Annotations["k"] != "v" || d.Spec.Paused || d.Status.Replicas != 3 {
		t.Errorf("after the /status patch: labels %v annotations %v paused %v replicas %d; want a=1, k=v, not paused, 3", d.Labels, d.Annotations, d.Spec.Paused, d.Status.Replicas)
	}
}
