package fakeapi

import (
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/fake"
)

// hasStatus reports whether res has the status subresource: an
// unstructured resource when it says so, a typed one when its Go type has
// a Status struct field (pods, deployments, nodes...; not configmaps).
func hasStatus(sch *runtime.Scheme, res fake.Resource) bool {
	if res.Unstructured {
		return res.StatusSubresource
	}
	obj, err := sch.New(res.GVR.GroupVersion().WithKind(res.Kind))
	if err != nil {
		return false
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return false
	}
	f := v.Elem().FieldByName("Status")
	return f.IsValid() && f.Kind() == reflect.Struct
}

// withStatus returns a copy of obj whose status is from's (none if from
// has none), as kube-apiserver's registries keep the stored status on a
// write to the object and take only the status from a write to /status.
func (h *handler) withStatus(res fake.Resource, obj, from runtime.Object) (runtime.Object, error) {
	content, err := toMap(obj)
	if err != nil {
		return nil, err
	}
	src, err := toMap(from)
	if err != nil {
		return nil, err
	}
	if st, ok := src["status"]; ok {
		content["status"] = st
	} else {
		delete(content, "status")
	}
	if res.Unstructured {
		return &unstructured.Unstructured{Object: content}, nil
	}
	out, err := h.newObject(res)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, out); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}

// toMap is a deep copy of obj as unstructured content.
func toMap(obj runtime.Object) (map[string]any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.DeepCopy().Object, nil
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return content, nil
}

// prepareWrite turns the object a client wrote (new) into the one to
// store, given the stored one (cur): for a resource with the status
// subresource, a write to the object keeps cur's status; a write to
// /status of an unstructured resource keeps everything of cur but the
// status (and takes new's resourceVersion, a precondition), as the
// custom resource status strategy does, and one of a typed resource is
// typedStatusWrite.
func (h *handler) prepareWrite(req request, cur, obj runtime.Object) (runtime.Object, error) {
	switch {
	case !h.status[req.res.GVR]:
		return obj, nil
	case req.subresource == "":
		return h.withStatus(req.res, obj, cur)
	case req.subresource == "approval":
		return h.approvalWrite(req.res, cur, obj)
	case !req.res.Unstructured:
		return h.typedStatusWrite(req.res, cur, obj)
	}
	out, err := h.withStatus(req.res, cur, obj)
	if err != nil {
		return nil, err
	}
	om, _ := meta.Accessor(obj)
	m, _ := meta.Accessor(out)
	m.SetResourceVersion(om.GetResourceVersion())
	return out, nil
}

// statusKeeps are the metadata fields kube-apiserver's status strategies
// keep from the stored object, by kind (pkg/registry/.../strategy.go,
// v1.36: the deployment status strategy keeps the labels, the pod's its
// owner references); every other typed status strategy resets only the
// spec.
var statusKeeps = map[schema.GroupVersionKind][]string{
	{Group: "apps", Version: "v1", Kind: "Deployment"}: {"labels"},
	{Version: "v1", Kind: "Pod"}:                       {"ownerReferences"},
}

// typedStatusWrite is a write to /status of a built-in type, as its
// registry's status strategy does it: the status and the metadata
// (annotations, labels, finalizers, ...) come from the write, all else
// (the spec) from the stored object, but for the metadata fields
// statusKeeps names. The metadata the server owns (uid, creation and
// deletion timestamps) is kept by the fake's update as on any write.
func (h *handler) typedStatusWrite(res fake.Resource, cur, obj runtime.Object) (runtime.Object, error) {
	content, err := toMap(cur)
	if err != nil {
		return nil, err
	}
	src, err := toMap(obj)
	if err != nil {
		return nil, err
	}
	stored, _ := content["metadata"].(map[string]any)
	md, _ := src["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	for _, f := range statusKeeps[res.GVR.GroupVersion().WithKind(res.Kind)] {
		if v, ok := stored[f]; ok {
			md[f] = v
		} else {
			delete(md, f)
		}
	}
	content["metadata"] = md
	if st, ok := src["status"]; ok {
		content["status"] = st
	} else {
		delete(content, "status")
	}
	out, err := h.newObject(res)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, out); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}

// csrsGVR is the resource with the approval subresource.
var csrsGVR = schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}

// hasApproval reports whether res has the approval subresource: typed
// certificate signing requests.
func hasApproval(res fake.Resource) bool { return res.GVR == csrsGVR && !res.Unstructured }

// approvalWrite is a write to certificatesigningrequests/NAME/approval,
// as the CSR approval strategy does it: the metadata and the status
// conditions come from the write (their lastUpdateTime and
// lastTransitionTime set to now where unset), the spec and the rest of
// the status from the stored object. The approval update's validation
// (not both Approved and Denied, ...) is not done.
func (h *handler) approvalWrite(res fake.Resource, cur, obj runtime.Object) (runtime.Object, error) {
	content, err := toMap(cur)
	if err != nil {
		return nil, err
	}
	src, err := toMap(obj)
	if err != nil {
		return nil, err
	}
	if md, ok := src["metadata"]; ok {
		content["metadata"] = md
	}
	conds, _, _ := unstructured.NestedSlice(src, "status", "conditions")
	now := metav1.NewTime(time.Now().Truncate(time.Second)).UTC().Format(time.RFC3339)
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			for _, f := range []string{"lastUpdateTime", "lastTransitionTime"} {
				if v, _ := m[f].(string); v == "" {
					m[f] = now
				}
			}
		}
	}
	if err := unstructured.SetNestedSlice(content, conds, "status", "conditions"); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out, err := h.newObject(res)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, out); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}
