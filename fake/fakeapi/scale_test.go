package fakeapi_test

import (
	"net/http"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
)

// A deployment's scale subresource: get, update and patch of an
// autoscaling/v1 Scale that mirrors spec.replicas, status.replicas and the
// selector; a stale resourceVersion conflicts, negative replicas are 422.
func TestScaleSubresource(t *testing.T) {
	ctx := t.Context()
	deployments := fake.Resource{GVR: appsv1.SchemeGroupVersion.WithResource("deployments"), Kind: "Deployment", Namespaced: true}
	srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{deployments}})
	for _, protobuf := range []bool{false, true} {
		cs := kubernetes.NewForConfigOrDie(fakeapi.ServeTest(t, srv, fakeapi.Options{Protobuf: protobuf}))
		ns := "json"
		if protobuf {
			ns = "proto"
		}
		dc := cs.AppsV1().Deployments(ns)
		two := int32(2)
		d, err := dc.Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "d"},
			Spec:       appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := dc.GetScale(ctx, "d", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s.Spec.Replicas != 2 || s.Status.Selector != "app=d" || s.ResourceVersion != d.ResourceVersion || s.UID != d.UID {
			t.Errorf("%s: scale %+v, want 2 replicas, selector app=d, the deployment's RV and UID", ns, s)
		}
		s.Spec.Replicas = 5
		s, err = dc.UpdateScale(ctx, "d", s, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := dc.Get(ctx, "d", metav1.GetOptions{}); s.Spec.Replicas != 5 || *got.Spec.Replicas != 5 || s.ResourceVersion != got.ResourceVersion {
			t.Errorf("%s: after UpdateScale: scale %d at %s, deployment %d at %s", ns, s.Spec.Replicas, s.ResourceVersion, *got.Spec.Replicas, got.ResourceVersion)
		}
		_, err = dc.UpdateScale(ctx, "d", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "d", ResourceVersion: d.ResourceVersion}, Spec: autoscalingv1.ScaleSpec{Replicas: 1}}, metav1.UpdateOptions{})
		wantStatus(t, ns+": stale UpdateScale", err, http.StatusConflict, metav1.StatusReasonConflict)
		_, err = dc.UpdateScale(ctx, "d", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: autoscalingv1.ScaleSpec{Replicas: -1}}, metav1.UpdateOptions{})
		wantStatus(t, ns+": negative replicas", err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)

		if _, err := dc.Patch(ctx, "d", types.MergePatchType, []byte(`{"spec":{"replicas":7}}`), metav1.PatchOptions{}, "scale"); err != nil {
			t.Fatal(err)
		}
		if got, _ := dc.Get(ctx, "d", metav1.GetOptions{}); *got.Spec.Replicas != 7 {
			t.Errorf("%s: after the scale patch: %d replicas, want 7", ns, *got.Spec.Replicas)
		}
	}
}

// A CSR's approval subresource writes its conditions (timestamps filled)
// and metadata, not its spec nor the rest of its status.
func TestCSRApproval(t *testing.T) {
	ctx := t.Context()
	csrs := fake.Resource{GVR: certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"), Kind: "CertificateSigningRequest"}
	srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{csrs}})
	cc := kubernetes.NewForConfigOrDie(fakeapi.ServeTest(t, srv, fakeapi.Options{})).CertificatesV1().CertificateSigningRequests()
	csr, err := cc.Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: "example.com/s", Request: []byte("req")},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
	csr.Status.Certificate = []byte("not via approval")
	csr.Spec.SignerName = "example.com/other"
	csr.Annotations = map[string]string{"k": "v"}
	if _, err := cc.UpdateApproval(ctx, "c", csr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := cc.Get(ctx, "c", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != certificatesv1.CertificateApproved || got.Status.Conditions[0].LastUpdateTime.IsZero() ||
		got.Status.Certificate != nil || got.Spec.SignerName != "example.com/s" || got.Annotations["k"] != "v" {
		t.Errorf("after UpdateApproval: %+v", got)
	}
}
