package fake

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/scheme"
)

// errStatus returns the Status of an apierrors error, or a zero Status.
func errStatus(err error) metav1.Status {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return st.Status()
	}
	return metav1.Status{}
}

func newCM(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

// TestWriteErrorStatusesMatchKubeAPIServer pins the exact Statuses
// kube-apiserver v1.36.3 answered rejected writes with (measured by
// test/conformance).
func TestWriteErrorStatusesMatchKubeAPIServer(t *testing.T) {
	srv := newTestServer(t, Options{Resources: []Resource{ConfigMaps()}})
	ctx := t.Context()
	a := mustCreate(t, srv, newCM("ns", "a", nil)).(*corev1.ConfigMap)
	cur := mustUpdate(t, srv, newCM("ns", "a", map[string]string{"k": "1"})).(*corev1.ConfigMap)
	wrong := types.UID("00000000-0000-0000-0000-00000000dead")
	conflict := func(msg, kind string) metav1.Status {
		return metav1.Status{Status: metav1.StatusFailure, Code: 409, Reason: metav1.StatusReasonConflict,
			Message: msg, Details: &metav1.StatusDetails{Name: "a", Kind: kind}}
	}
	withUID := func(cm *corev1.ConfigMap, uid types.UID) *corev1.ConfigMap { cm.UID = uid; return cm }
	withRV := func(cm *corev1.ConfigMap, rv string) *corev1.ConfigMap { cm.ResourceVersion = rv; return cm }
	_, staleDelete := srv.Delete(ctx, withRV(newCM("ns", "a", nil), a.ResourceVersion))
	_, uidDelete := srv.Delete(ctx, withUID(newCM("ns", "a", nil), wrong))
	_, uidUpdate := srv.Update(ctx, withUID(newCM("ns", "a", map[string]string{"k": "2"}), wrong))
	_, rvCreate := srv.Create(ctx, withRV(newCM("ns", "b", nil), "1"))
	_, noName := srv.Create(ctx, newCM("ns", "", nil))
	cases := []struct {
		name string
		err  error
		want metav1.Status
	}{
		{"delete with a stale resourceVersion", staleDelete, conflict(fmt.Sprintf(
			`Operation cannot be fulfilled on ConfigMap "a": the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified`,
			a.ResourceVersion, cur.ResourceVersion), "ConfigMap")},
		{"delete with a wrong UID", uidDelete, conflict(fmt.Sprintf(
			`Operation cannot be fulfilled on ConfigMap "a": the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated`,
			wrong, a.UID), "ConfigMap")},
		{"update with a wrong UID", uidUpdate, conflict(fmt.Sprintf(
			`Operation cannot be fulfilled on configmaps "a": StorageError: invalid object, Code: 4, Key: /registry/configmaps/ns/a, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s`,
			wrong, a.UID), "configmaps")},
		{"create with a resourceVersion", rvCreate, metav1.Status{Status: metav1.StatusFailure, Code: 500,
			Message: "resourceVersion should not be set on objects to be created"}},
		{"create without a name", noName, metav1.Status{Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid,
			Message: `ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required`,
			Details: &metav1.StatusDetails{Kind: "ConfigMap", Causes: []metav1.StatusCause{{
				Type: metav1.CauseType(field.ErrorTypeRequired), Message: "Required value: name or generateName is required", Field: "metadata.name"}}}}},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, errStatus(tc.err)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if got := mustGetCM(t, srv, "ns", "a"); got.ResourceVersion != cur.ResourceVersion || got.Data["k"] != "1" {
		t.Errorf("a rejected write changed the object: %+v", got)
	}
}

func mustGetCM(t *testing.T, srv *Server, ns, name string) *corev1.ConfigMap {
	t.Helper()
	obj, err := srv.Get(t.Context(), ConfigMaps().GVR, ns, name)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	return obj.(*corev1.ConfigMap)
}

// TestMetadataValidation: creates and updates run apimachinery's metadata
// validation, with kube-apiserver's messages.
func TestMetadataValidation(t *testing.T) {
	srv := newTestServer(t, Options{Resources: []Resource{ConfigMaps()}})
	ctx := t.Context()
	badLabel := newCM("ns", "b", nil)
	badLabel.Labels = map[string]string{"app": "bad value!"}
	badAnnotation := newCM("ns", "b", nil)
	badAnnotation.Annotations = map[string]string{"not a key": "v"}
	cases := []struct {
		obj    *corev1.ConfigMap
		prefix string
	}{
		{badLabel, `ConfigMap "b" is invalid: metadata.labels: Invalid value: "bad value!": a valid label must be an empty string or consist of alphanumeric characters`},
		{newCM("ns", "Bad_Name", nil), `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of`},
		{newCM("Bad_NS", "b", nil), `ConfigMap "b" is invalid: metadata.namespace: Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist of`},
		{badAnnotation, `ConfigMap "b" is invalid: metadata.annotations: Invalid value: "not a key": name part must consist of`},
	}
	for _, tc := range cases {
		_, err := srv.Create(ctx, tc.obj)
		if st := errStatus(err); st.Code != 422 || st.Reason != metav1.StatusReasonInvalid || !strings.HasPrefix(st.Message, tc.prefix) {
			t.Errorf("create %s/%s: %v; want 422 Invalid %q...", tc.obj.Namespace, tc.obj.Name, err, tc.prefix)
		}
	}
	mustCreate(t, srv, newCM("ns", "b", nil))
	upd := newCM("ns", "b", nil)
	upd.Labels = map[string]string{"app": "bad value!"}
	if _, err := srv.Update(ctx, upd); !apierrors.IsInvalid(err) {
		t.Errorf("update with a bad label: %v; want Invalid", err)
	}
	dns := Resource{GVR: GVR{Version: "v1", Resource: "services"}, Kind: "Service", Namespaced: true,
		ValidateName: func(name string, prefix bool) []string {
			if strings.Contains(name, ".") {
				return []string{"no dots"}
			}
			return nil
		}}
	svc := newTestServer(t, Options{Resources: []Resource{dns}})
	if _, err := svc.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a.b"}}); !apierrors.IsInvalid(err) {
		t.Errorf("Resource.ValidateName not applied: %v", err)
	}
}

// TestRequireNamespaces: opt-in namespace lifecycle admission.
func TestRequireNamespaces(t *testing.T) {
	ctx := t.Context()
	lax := newTestServer(t, Options{})
	mustCreate(t, lax, newPod("anywhere", "a", nil))

	cluster := Resource{GVR: GVR{Version: "v1", Resource: "nodes"}, Kind: "Node"}
	srv := newTestServer(t, Options{RequireNamespaces: true, Resources: []Resource{Pods(), cluster}})
	_, err := srv.Create(ctx, newPod("ns", "a", nil))
	want := metav1.Status{Status: metav1.StatusFailure, Code: 404, Reason: metav1.StatusReasonNotFound,
		Message: `namespaces "ns" not found`, Details: &metav1.StatusDetails{Name: "ns", Kind: "namespaces"}}
	if diff := cmp.Diff(want, errStatus(err)); diff != "" {
		t.Errorf("create in a missing namespace (-want +got):\n%s", diff)
	}
	if srv.ResourceVersion() != "0" {
		t.Errorf("a rejected create moved the RV to %s", srv.ResourceVersion())
	}
	if err := srv.CreateNamespace(ctx, "ns"); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, srv, newPod("ns", "a", nil))
	mustCreate(t, srv, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}) // cluster-scoped: no namespace needed
	if err := srv.CreateNamespace(ctx, "ns"); !apierrors.IsAlreadyExists(err) {
		t.Errorf("CreateNamespace twice: %v; want AlreadyExists", err)
	}
	for _, bad := range []string{"", "Bad_NS", "a.b"} {
		if err := srv.CreateNamespace(ctx, bad); !apierrors.IsInvalid(err) {
			t.Errorf("CreateNamespace(%q): %v; want Invalid", bad, err)
		}
	}
}

// TestManagedFields: with Options.FieldManager, writes record one Update
// entry for the fields the object sets; its time moves only with them.
func TestManagedFields(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(t, Options{FieldManager: "tester", Resources: []Resource{ConfigMaps()}})
		start := time.Now().Truncate(time.Second)
		empty := mustCreate(t, srv, newCM("ns", "empty", nil)).(*corev1.ConfigMap)
		if empty.ManagedFields != nil {
			t.Errorf("an object setting no field has managedFields %+v", empty.ManagedFields)
		}
		m := newCM("ns", "m", map[string]string{"k": "v"})
		m.Labels = map[string]string{"app": "x"}
		got := mustCreate(t, srv, m).(*corev1.ConfigMap)
		entry := func(at time.Time, raw string) []metav1.ManagedFieldsEntry {
			tm := metav1.NewTime(at)
			return []metav1.ManagedFieldsEntry{{Manager: "tester", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "v1", Time: &tm, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(raw)}}
		}
		created := `{"f:data":{".":{},"f:k":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`
		if diff := cmp.Diff(entry(start, created), got.ManagedFields); diff != "" {
			t.Errorf("after create (-want +got):\n%s", diff)
		}
		time.Sleep(5 * time.Second)
		m.ManagedFields = nil // a client that does not send them back keeps the stored ones
		same := mustUpdate(t, srv, m).(*corev1.ConfigMap)
		if same.ResourceVersion != got.ResourceVersion {
			t.Errorf("no-op update moved the RV: %s -> %s", got.ResourceVersion, same.ResourceVersion)
		}
		got.Data["k2"] = "w"
		upd := mustUpdate(t, srv, got).(*corev1.ConfigMap)
		updated := `{"f:data":{".":{},"f:k":{},"f:k2":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`
		if diff := cmp.Diff(entry(start.Add(5*time.Second), updated), upd.ManagedFields); diff != "" {
			t.Errorf("after update (-want +got):\n%s", diff)
		}
		plain := newTestServer(t, Options{Resources: []Resource{ConfigMaps()}})
		if out := mustCreate(t, plain, newCM("ns", "m", map[string]string{"k": "v"})).(*corev1.ConfigMap); out.ManagedFields != nil {
			t.Errorf("without FieldManager: managedFields %+v", out.ManagedFields)
		}
	})
}

func TestEtcdKey(t *testing.T) {
	cases := []struct {
		res      Resource
		ns, name string
		want     string
	}{
		{ConfigMaps(), "ns", "a", "/registry/configmaps/ns/a"},
		{Resource{GVR: GVR{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true}, "ns", "d", "/registry/apps/deployments/ns/d"},
		{Resource{GVR: GVR{Version: "v1", Resource: "nodes"}, Kind: "Node"}, "", "n", "/registry/nodes/n"},
	}
	for _, tc := range cases {
		r, err := newResourceState(tc.res, scheme.Scheme)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.etcdKey(tc.ns, tc.name); got != tc.want {
			t.Errorf("etcdKey(%q, %q) = %q; want %q", tc.ns, tc.name, got, tc.want)
		}
	}
}
