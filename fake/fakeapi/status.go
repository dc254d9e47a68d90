package fakeapi

import (
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

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
// subresource, a write to the object keeps cur's status and a write to
// /status keeps everything of cur but the status (and takes new's
// resourceVersion, a precondition).
func (h *handler) prepareWrite(req request, cur, obj runtime.Object) (runtime.Object, error) {
	switch {
	case !h.status[req.res.GVR]:
		return obj, nil
	case req.subresource == "":
		return h.withStatus(req.res, obj, cur)
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
