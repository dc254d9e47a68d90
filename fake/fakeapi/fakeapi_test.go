package fakeapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
)

var widgets = fake.Resource{
	GVR:          schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
	Kind:         "Widget",
	Namespaced:   true,
	Unstructured: true,
}

var nodes = fake.Resource{GVR: corev1.SchemeGroupVersion.WithResource("nodes"), Kind: "Node"}

// serve starts a fake with pods, configmaps, nodes and widgets and a
// clientset on it.
func serve(t *testing.T, opts fakeapi.Options) (*fake.Server, *rest.Config, kubernetes.Interface) {
	t.Helper()
	srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{fake.Pods(), fake.ConfigMaps(), nodes, widgets}})
	cfg := fakeapi.ServeTest(t, srv, opts)
	return srv, cfg, kubernetes.NewForConfigOrDie(cfg)
}

// stored is the fake's copy of a pod, with the TypeMeta a decoded one
// lacks.
func stored(t *testing.T, srv *fake.Server, ns, name string) *corev1.Pod {
	t.Helper()
	obj, err := srv.Get(t.Context(), fake.Pods().GVR, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*corev1.Pod)
}

func equalPods(t *testing.T, what string, got, want *corev1.Pod) {
	t.Helper()
	got, want = got.DeepCopy(), want.DeepCopy()
	got.TypeMeta, want.TypeMeta = metav1.TypeMeta{}, metav1.TypeMeta{}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s: the client's pod differs from the fake's (-fake +client):\n%s", what, d)
	}
}

func TestTypedClientRoundTrips(t *testing.T) {
	for _, inMemory := range []bool{false, true} {
		t.Run(fmt.Sprintf("InMemory=%v", inMemory), func(t *testing.T) {
			ctx := t.Context()
			srv, _, cs := serve(t, fakeapi.Options{InMemory: inMemory})
			pods := cs.CoreV1().Pods("ns")

			created, err := pods.Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() || created.Namespace != "ns" {
				t.Errorf("created pod lacks server-set metadata: %+v", created.ObjectMeta)
			}
			equalPods(t, "create", created, stored(t, srv, "ns", "web"))

			got, err := pods.Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			equalPods(t, "get", got, stored(t, srv, "ns", "web"))

			got.Labels["tier"] = "front"
			updated, err := pods.Update(ctx, got, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if updated.ResourceVersion == got.ResourceVersion {
				t.Errorf("update kept resourceVersion %s", got.ResourceVersion)
			}
			equalPods(t, "update", updated, stored(t, srv, "ns", "web"))

			for _, p := range []struct {
				typ   types.PatchType
				patch string
				check func(*corev1.Pod) bool
			}{
				{types.MergePatchType, `{"metadata":{"labels":{"merge":"yes"}}}`, func(p *corev1.Pod) bool { return p.Labels["merge"] == "yes" }},
				{types.JSONPatchType, `[{"op":"add","path":"/metadata/annotations","value":{"json":"yes"}}]`, func(p *corev1.Pod) bool { return p.Annotations["json"] == "yes" }},
				// A strategic merge patch merges the containers list by name.
				{types.StrategicMergePatchType, `{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}`, func(p *corev1.Pod) bool {
					return len(p.Spec.Containers) == 1 && p.Spec.Containers[0].Image == "nginx:2" && p.Labels["merge"] == "yes"
				}},
			} {
				patched, err := pods.Patch(ctx, "web", p.typ, []byte(p.patch), metav1.PatchOptions{})
				if err != nil {
					t.Fatalf("%s: %v", p.typ, err)
				}
				if !p.check(patched) {
					t.Errorf("%s: patch not applied: %+v", p.typ, patched)
				}
				equalPods(t, string(p.typ), patched, stored(t, srv, "ns", "web"))
			}

			list, err := pods.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if list.ResourceVersion != srv.ResourceVersion() || len(list.Items) != 1 {
				t.Fatalf("list at RV %s with %d items, want RV %s and 1", list.ResourceVersion, len(list.Items), srv.ResourceVersion())
			}
			equalPods(t, "list", &list.Items[0], stored(t, srv, "ns", "web"))

			if err := pods.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := srv.Get(ctx, fake.Pods().GVR, "ns", "web"); !apierrors.IsNotFound(err) {
				t.Errorf("after delete the fake's Get = %v, want NotFound", err)
			}
			if _, err := pods.Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("after delete the client's Get = %v, want NotFound", err)
			}
		})
	}
}

func TestConflicts(t *testing.T) {
	ctx := t.Context()
	srv, _, cs := serve(t, fakeapi.Options{})
	cms := cs.CoreV1().ConfigMaps("ns")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale := cm.DeepCopy()
	cm.Data["k"] = "2"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rvBefore := srv.ResourceVersion()

	stale.Data["k"] = "3"
	_, err = cms.Update(ctx, stale, metav1.UpdateOptions{})
	wantStatus(t, "update with a stale resourceVersion", err, http.StatusConflict, metav1.StatusReasonConflict)

	// A patch that names a stale resourceVersion conflicts too.
	patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"data":{"k":"4"}}`, stale.ResourceVersion)
	_, err = cms.Patch(ctx, "a", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	wantStatus(t, "patch with a stale resourceVersion", err, http.StatusConflict, metav1.StatusReasonConflict)

	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	wantStatus(t, "create of an existing name", err, http.StatusConflict, metav1.StatusReasonAlreadyExists)

	err = cms.Delete(ctx, "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale.ResourceVersion}})
	wantStatus(t, "delete with a stale resourceVersion precondition", err, http.StatusConflict, metav1.StatusReasonConflict)
	err = cms.Delete(ctx, "a", metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions("not-the-uid")})
	wantStatus(t, "delete with a wrong UID precondition", err, http.StatusConflict, metav1.StatusReasonConflict)

	if rv := srv.ResourceVersion(); rv != rvBefore {
		t.Errorf("failed writes moved the fake from RV %s to %s", rvBefore, rv)
	}
}

func wantStatus(t *testing.T, what string, err error, code int32, reason metav1.StatusReason) {
	t.Helper()
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		t.Errorf("%s: error %v, want a Status %d %s", what, err, code, reason)
		return
	}
	if st := se.Status(); st.Code != code || st.Reason != reason {
		t.Errorf("%s: Status %d %s (%s), want %d %s", what, st.Code, st.Reason, st.Message, code, reason)
	}
}

func TestGenerateName(t *testing.T) {
	ctx := t.Context()
	srv, _, cs := serve(t, fakeapi.Options{})
	got, err := cs.CoreV1().ConfigMaps("ns").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "cfg-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.Name, "cfg-") || len(got.Name) == len("cfg-") {
		t.Errorf("generated name %q, want cfg- and a suffix", got.Name)
	}
	if _, err := srv.Get(ctx, fake.ConfigMaps().GVR, "ns", got.Name); err != nil {
		t.Errorf("the fake has no %s: %v", got.Name, err)
	}
}

func TestInformerSyncsAndSeesCreate(t *testing.T) {
	ctx := t.Context()
	srv, _, cs := serve(t, fakeapi.Options{})
	if _, err := srv.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "before"}}); err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	inf := factory.Core().V1().Pods().Informer()
	added := make(chan string, 10)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		added <- obj.(*corev1.Pod).Name
	}}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	defer factory.Shutdown()
	defer close(stop)
	syncCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	if _, err := cs.CoreV1().Pods("ns").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	timeout := time.After(30 * time.Second)
	for !seen["before"] || !seen["after"] {
		select {
		case name := <-added:
			seen[name] = true
		case <-timeout:
			t.Fatalf("informer saw %v, want before and after", seen)
		}
	}
	if err := fake.Converged(srv, fake.LWOptions{Resource: fake.Pods().GVR}, inf.GetStore().List()); err != nil {
		t.Error(err)
	}
}

func TestFaultsReachTheClient(t *testing.T) {
	for _, tc := range []struct {
		kind   fake.FailureKind
		code   int32
		reason metav1.StatusReason
	}{
		{fake.Forbidden, http.StatusForbidden, metav1.StatusReasonForbidden},
		{fake.NotFound, http.StatusNotFound, metav1.StatusReasonNotFound},
		{fake.Expired, http.StatusGone, metav1.StatusReasonExpired},
		{fake.InternalError, http.StatusInternalServerError, metav1.StatusReasonInternalError},
	} {
		t.Run(string(tc.reason), func(t *testing.T) {
			srv, _, cs := serve(t, fakeapi.Options{})
			if err := srv.FailNext(fake.Failure{Verbs: fake.VerbList, Times: 1, Kind: tc.kind}); err != nil {
				t.Fatal(err)
			}
			_, err := cs.CoreV1().Pods("ns").List(t.Context(), metav1.ListOptions{})
			wantStatus(t, "list", err, tc.code, tc.reason)
			if _, err := cs.CoreV1().Pods("ns").List(t.Context(), metav1.ListOptions{}); err != nil {
				t.Errorf("second list: %v, want the fault used up", err)
			}
		})
	}
	t.Run("Down", func(t *testing.T) {
		srv, _, cs := serve(t, fakeapi.Options{})
		srv.Down()
		// A refused connection is a dropped one, which client-go retries
		// (ten times, a second apart) unless told not to.
		err := cs.CoreV1().RESTClient().Get().Namespace("ns").Resource("pods").MaxRetries(0).Do(t.Context()).Error()
		var se apierrors.APIStatus
		if err == nil || errors.As(err, &se) {
			t.Errorf("list of a down server: %v, want a transport error", err)
		}
		srv.Up()
		if _, err := cs.CoreV1().Pods("ns").List(t.Context(), metav1.ListOptions{}); err != nil {
			t.Errorf("list after Up: %v", err)
		}
	})
}

// A Failure naming a REST verb fails that request with its code, and the
// fake is left as it was; Down drops a write's connection.
func TestWriteFaults(t *testing.T) {
	ctx := t.Context()
	srv, _, cs := serve(t, fakeapi.Options{})
	cms := cs.CoreV1().ConfigMaps("ns")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []fake.Failure{
		{Verbs: fake.VerbCreate, Times: 1, Kind: fake.Forbidden},
		{Verbs: fake.VerbGet, Times: 1, Kind: fake.NotFound},
		{Verbs: fake.VerbUpdate, Times: 1, Kind: fake.InternalError},
		{Verbs: fake.VerbPatch, Times: 1, Kind: fake.Forbidden},
		{Verbs: fake.VerbDelete, Times: 1, Kind: fake.InternalError},
	} {
		if err := srv.FailNext(f); err != nil {
			t.Fatal(err)
		}
	}
	rv := srv.ResourceVersion()
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{})
	wantStatus(t, "create", err, http.StatusForbidden, metav1.StatusReasonForbidden)
	_, err = cms.Get(ctx, "a", metav1.GetOptions{})
	wantStatus(t, "get", err, http.StatusNotFound, metav1.StatusReasonNotFound)
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	wantStatus(t, "update", err, http.StatusInternalServerError, metav1.StatusReasonInternalError)
	_, err = cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"k":"v"}}`), metav1.PatchOptions{})
	wantStatus(t, "patch", err, http.StatusForbidden, metav1.StatusReasonForbidden)
	err = cms.Delete(ctx, "a", metav1.DeleteOptions{})
	wantStatus(t, "delete", err, http.StatusInternalServerError, metav1.StatusReasonInternalError)
	if got := srv.ResourceVersion(); got != rv {
		t.Errorf("faulted writes moved the fake from RV %s to %s", rv, got)
	}
	if _, err := cms.Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Errorf("get after the faults were used up: %v", err)
	}

	srv.Down()
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	var se apierrors.APIStatus
	if err == nil || errors.As(err, &se) {
		t.Errorf("create on a down server: %v, want a transport error", err)
	}
	srv.Up()
	if _, err := srv.Get(ctx, fake.ConfigMaps().GVR, "ns", "c"); !apierrors.IsNotFound(err) {
		t.Errorf("a create on a down server stored c: %v", err)
	}
}

// do sends a raw request and decodes the Status it answers.
func do(t *testing.T, cfg *rest.Config, method, path, contentType string, body []byte) (int, metav1.Status) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, cfg.Host+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var st metav1.Status
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("%s %s: %d with a body that is no JSON: %q", method, path, resp.StatusCode, data)
	}
	return resp.StatusCode, st
}

func TestBadRequests(t *testing.T) {
	srv, cfg, _ := serve(t, fakeapi.Options{})
	rv := srv.ResourceVersion()
	for _, tc := range []struct {
		name, method, path, contentType, body string
		code                                  int
		reason                                metav1.StatusReason
	}{
		{"malformed JSON", "POST", "/api/v1/namespaces/ns/configmaps", "application/json", `{"metadata":`, 400, metav1.StatusReasonBadRequest},
		{"wrong kind", "POST", "/api/v1/namespaces/ns/configmaps", "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}`, 400, metav1.StatusReasonBadRequest},
		{"wrong namespace", "POST", "/api/v1/namespaces/ns/configmaps", "application/json", `{"metadata":{"name":"a","namespace":"other"}}`, 400, metav1.StatusReasonBadRequest},
		{"malformed unstructured", "POST", "/apis/example.com/v1/namespaces/ns/widgets", "application/json", `[1]`, 400, metav1.StatusReasonBadRequest},
		{"wrong content type", "POST", "/api/v1/namespaces/ns/configmaps", "text/plain", `{}`, 415, metav1.StatusReasonUnsupportedMediaType},
		{"protobuf for a custom resource", "POST", "/apis/example.com/v1/namespaces/ns/widgets", "application/vnd.kubernetes.protobuf", `k8s`, 415, metav1.StatusReasonUnsupportedMediaType},
		{"apply patch", "PATCH", "/api/v1/namespaces/ns/configmaps/a", "application/apply-patch+yaml", `{}`, 415, metav1.StatusReasonUnsupportedMediaType},
		{"strategic patch of a custom resource", "PATCH", "/apis/example.com/v1/namespaces/ns/widgets/a", "application/strategic-merge-patch+json", `{}`, 415, metav1.StatusReasonUnsupportedMediaType},
		{"oversized", "POST", "/api/v1/namespaces/ns/configmaps", "application/json", `{"data":{"k":"` + strings.Repeat("x", fakeapi.MaxRequestBodyBytes) + `"}}`, 413, metav1.StatusReasonRequestEntityTooLarge},
		{"unknown resource", "GET", "/api/v1/namespaces/ns/secrets", "", "", 404, metav1.StatusReasonNotFound},
		{"unknown version", "GET", "/apis/example.com/v2/widgets", "", "", 404, metav1.StatusReasonNotFound},
		{"missing object", "GET", "/api/v1/namespaces/ns/configmaps/nope", "", "", 404, metav1.StatusReasonNotFound},
		{"subresource", "GET", "/api/v1/namespaces/ns/pods/a/status", "", "", 404, metav1.StatusReasonNotFound},
		{"create across namespaces", "POST", "/api/v1/configmaps", "application/json", `{"metadata":{"name":"a","namespace":"ns"}}`, 405, metav1.StatusReasonMethodNotAllowed},
		{"delete of /status", "DELETE", "/api/v1/namespaces/ns/pods/a/status", "", "", 405, metav1.StatusReasonMethodNotAllowed},
		{"invalid name", "POST", "/api/v1/namespaces/ns/configmaps", "application/json", `{"metadata":{"name":"Not_A_Name"}}`, 422, metav1.StatusReasonInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, st := do(t, cfg, tc.method, tc.path, tc.contentType, []byte(tc.body))
			if code != tc.code || st.Kind != "Status" || st.Code != int32(tc.code) || st.Reason != tc.reason || st.Status != metav1.StatusFailure {
				t.Errorf("%d %+v, want %d and a Status with reason %s", code, st, tc.code, tc.reason)
			}
		})
	}
	if got := srv.ResourceVersion(); got != rv {
		t.Errorf("bad requests moved the fake from RV %s to %s", rv, got)
	}
}

func TestDiscoveryAndDynamicClient(t *testing.T) {
	ctx := t.Context()
	srv, cfg, _ := serve(t, fakeapi.Options{})
	dc := discovery.NewDiscoveryClientForConfigOrDie(cfg)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	for gk, want := range map[schema.GroupKind]fake.Resource{
		{Kind: "Pod"}:                          fake.Pods(),
		{Kind: "Node"}:                         nodes,
		{Group: "example.com", Kind: "Widget"}: widgets,
	} {
		m, err := mapper.RESTMapping(gk)
		if err != nil {
			t.Fatalf("RESTMapping(%v): %v", gk, err)
		}
		namespaced := m.Scope.Name() == "namespace"
		if m.Resource != want.GVR || namespaced != want.Namespaced {
			t.Errorf("RESTMapping(%v) = %v namespaced=%v, want %v namespaced=%v", gk, m.Resource, namespaced, want.GVR, want.Namespaced)
		}
	}
	if v, err := dc.ServerVersion(); err != nil || v.Major != "1" {
		t.Errorf("ServerVersion() = %v, %v", v, err)
	}

	dyn := dynamic.NewForConfigOrDie(cfg).Resource(widgets.GVR).Namespace("ns")
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"generateName": "w-"},
		"spec":     map[string]any{"size": int64(1)},
	}}
	created, err := dyn.Create(ctx, w, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	patched, err := dyn.Patch(ctx, created.GetName(), types.MergePatchType, []byte(`{"spec":{"size":2}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := srv.Get(ctx, widgets.GVR, "ns", created.GetName())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(obj.(*unstructured.Unstructured).Object, patched.Object); d != "" {
		t.Errorf("patched widget differs from the fake's (-fake +client):\n%s", d)
	}
	if size, _, _ := unstructured.NestedInt64(patched.Object, "spec", "size"); size != 2 {
		t.Errorf("spec.size = %d after the patch, want 2", size)
	}
	if err := dyn.Delete(ctx, created.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// A cluster-scoped resource's objects have no namespace.
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Get(ctx, nodes.GVR, "", "n1"); err != nil {
		t.Error(err)
	}
}

// Concurrent patches that leave resourceVersion alone all land: each
// that meets another's write is reapplied to the new state, as
// kube-apiserver retries it.
func TestConcurrentPatchesAllLand(t *testing.T) {
	ctx := t.Context()
	srv, _, cs := serve(t, fakeapi.Options{})
	cms := cs.CoreV1().ConfigMaps("ns")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			patch := fmt.Sprintf(`{"data":{"k%d":"v"}}`, i)
			_, err := cms.Patch(ctx, "shared", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("patch: %v", err)
		}
	}
	obj, err := srv.Get(ctx, fake.ConfigMaps().GVR, "ns", "shared")
	if err != nil {
		t.Fatal(err)
	}
	if d := obj.(*corev1.ConfigMap).Data; len(d) != n {
		t.Errorf("data %v, want %d keys", d, n)
	}
}

// A clientset's DeleteCollection deletes what its selector matches and
// answers the deleted objects; a Failure naming the verb fails it.
func TestDeleteCollection(t *testing.T) {
	ctx := t.Context()
	srv, cfg, cs := serve(t, fakeapi.Options{})
	for _, name := range []string{"a", "b", "c"} {
		lbls := map[string]string{"app": "web"}
		if name == "b" {
			lbls["app"] = "db"
		}
		if _, err := srv.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: lbls}}); err != nil {
			t.Fatal(err)
		}
	}
	cms := cs.CoreV1().ConfigMaps("ns")
	if err := srv.FailNext(fake.Failure{Verbs: fake.VerbDeleteCollection, Times: 1, Kind: fake.Forbidden}); err != nil {
		t.Fatal(err)
	}
	err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=web"})
	wantStatus(t, "faulted deletecollection", err, http.StatusForbidden, metav1.StatusReasonForbidden)
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=web"}); err != nil {
		t.Fatal(err)
	}
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "b" {
		t.Errorf("left %v, want b alone", list.Items)
	}
	// The answer is the list of what was deleted.
	code, body := rawDelete(t, cfg.Host+"/api/v1/namespaces/ns/configmaps")
	if code != http.StatusOK || !strings.Contains(body, `"kind":"ConfigMapList"`) || !strings.Contains(body, `"name":"b"`) {
		t.Errorf("deletecollection answered %d %s, want 200 and a ConfigMapList of b", code, body)
	}
	if _, err := srv.Get(ctx, fake.ConfigMaps().GVR, "ns", "b"); !apierrors.IsNotFound(err) {
		t.Errorf("b after deletecollection: %v, want NotFound", err)
	}
}

// rawDelete sends a DELETE and returns the code and body.
func rawDelete(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "DELETE", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}
