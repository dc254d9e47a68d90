package fakeapi

import (
	"fmt"
	"net/http"
	"slices"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// scaled are the built-in resources with the scale subresource.
var scaled = []schema.GroupVersionResource{
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "replicasets"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Version: "v1", Resource: "replicationcontrollers"},
}

// hasScale reports whether res has the scale subresource: a typed one of
// the scaled resources.
func hasScale(gvr schema.GroupVersionResource, unstructured bool) bool {
	return !unstructured && slices.Contains(scaled, gvr)
}

// scaleVerbs are those of a scale subresource.
var scaleVerbs = metav1.Verbs{"get", "patch", "update"}

// serveScale serves get, update and patch of RESOURCE/NAME/scale as
// kube-apiserver's scale registries: an autoscaling/v1 Scale whose
// metadata is the object's, spec.replicas the object's, status.replicas
// and status.selector (the label selector, as a string) the object's; an
// update or patch writes spec.replicas (a resourceVersion set on the
// Scale is a precondition on the object) and answers the new Scale.
func (h *handler) serveScale(w http.ResponseWriter, r *http.Request, req request) {
	cur, err := h.srv.Get(r.Context(), req.res.GVR, req.namespace, req.name)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	scale, err := scaleOf(cur)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	var want *autoscalingv1.Scale
	switch r.Method {
	case http.MethodGet:
		h.writeScale(w, r, req, scale)
		return
	case http.MethodPut:
		body, err := readBody(r)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		want, err = h.decodeScale(r, body)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
	case http.MethodPatch:
		want, err = h.patchScale(r, req, scale)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
	default:
		h.writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Group: req.res.GVR.Group, Resource: req.res.GVR.Resource + "/scale"}, r.Method))
		return
	}
	var opts metav1.UpdateOptions
	if err := h.writeOptions(r, &opts, false); err != nil {
		h.writeError(w, r, err)
		return
	}
	if want.Name != "" && want.Name != req.name {
		h.writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", want.Name, req.name)))
		return
	}
	if want.Spec.Replicas < 0 {
		h.writeError(w, r, apierrors.NewInvalid(autoscalingv1.SchemeGroupVersion.WithKind("Scale").GroupKind(), req.name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "replicas"), want.Spec.Replicas, "must be greater than or equal to 0"),
		}))
		return
	}
	content, err := toMap(cur)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := unstructured.SetNestedField(content, int64(want.Spec.Replicas), "spec", "replicas"); err != nil {
		h.writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	if want.ResourceVersion != "" {
		// The Scale's resourceVersion is the object's: a precondition.
		if err := unstructured.SetNestedField(content, want.ResourceVersion, "metadata", "resourceVersion"); err != nil {
			h.writeError(w, r, apierrors.NewInternalError(err))
			return
		}
	}
	obj, err := h.newObject(req.res)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, obj); err != nil {
		h.writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	out, err := h.srv.UpdateWith(r.Context(), obj, opts)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if scale, err = scaleOf(out); err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeScale(w, r, req, scale)
}

// scaleOf is the Scale of a deployment, replica set, stateful set or
// replication controller.
func scaleOf(obj runtime.Object) (*autoscalingv1.Scale, error) {
	content, err := toMap(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: content}
	replicas, _, _ := unstructured.NestedInt64(content, "spec", "replicas")
	current, _, _ := unstructured.NestedInt64(content, "status", "replicas")
	var selector string
	if m, ok, _ := unstructured.NestedStringMap(content, "spec", "selector"); ok && u.GetKind() == "ReplicationController" {
		selector = labels.SelectorFromSet(m).String()
	} else if raw, ok, _ := unstructured.NestedMap(content, "spec", "selector"); ok {
		var ls metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err == nil {
			if sel, err := metav1.LabelSelectorAsSelector(&ls); err == nil {
				selector = sel.String()
			}
		}
	}
	return &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{
			Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
			ResourceVersion: u.GetResourceVersion(), CreationTimestamp: u.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: int32(replicas)},
		Status: autoscalingv1.ScaleStatus{Replicas: int32(current), Selector: selector},
	}, nil
}

// decodeScale decodes a Scale body (JSON, YAML or protobuf).
func (h *handler) decodeScale(r *http.Request, body []byte) (*autoscalingv1.Scale, error) {
	info, ok := runtime.SerializerInfoForMediaType(h.codecs.SupportedMediaTypes(), mediaType(r))
	if !ok {
		return nil, errUnsupportedMediaType(mediaTypes(h.codecs.SupportedMediaTypes()))
	}
	gvk := autoscalingv1.SchemeGroupVersion.WithKind("Scale")
	obj, _, err := info.Serializer.Decode(body, &gvk, &autoscalingv1.Scale{})
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	s, ok := obj.(*autoscalingv1.Scale)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is a %T, not a Scale", obj))
	}
	return s, nil
}

// patchScale applies a JSON, merge or strategic merge patch to the
// current Scale.
func (h *handler) patchScale(r *http.Request, req request, cur *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
	pt := mediaType(r)
	accepted := patchTypes(false)
	if !slices.Contains(accepted, pt) {
		return nil, errUnsupportedMediaType(accepted)
	}
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	curJSON, err := runtime.Encode(h.codecs.LegacyCodec(autoscalingv1.SchemeGroupVersion), cur)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	scaleReq := req
	scaleReq.res.GVR, scaleReq.res.Kind = autoscalingv1.SchemeGroupVersion.WithResource("scales"), "Scale"
	patched, err := h.applyPatch(scaleReq, types.PatchType(pt), curJSON, body)
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", runtime.ContentTypeJSON)
	return h.decodeScale(r, patched)
}

// writeScale answers a Scale in the request's encoding (JSON or, when
// preferred and served, protobuf).
func (h *handler) writeScale(w http.ResponseWriter, r *http.Request, req request, s *autoscalingv1.Scale) {
	scaleReq := req
	scaleReq.res.GVR, scaleReq.res.Kind, scaleReq.res.Unstructured = autoscalingv1.SchemeGroupVersion.WithResource("scales"), "Scale", false
	scaleReq.metadataOnly = false
	h.writeObject(w, r, scaleReq, http.StatusOK, s)
}
