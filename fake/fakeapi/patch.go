package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// patchAttempts bounds the retries of a patch that meets a concurrent
// write. kube-apiserver's GuaranteedUpdate retries until the write
// lands; the bound only keeps a bug from spinning forever.
const patchAttempts = 100

// patchTypes are the patch media types served for res: JSON patch, merge
// patch and, for typed (built-in) resources, strategic merge patch.
// Apply patches (server-side apply) are not served yet.
func patchTypes(unstructured bool) []string {
	if unstructured {
		return []string{string(types.JSONPatchType), string(types.MergePatchType)}
	}
	return []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.StrategicMergePatchType)}
}

// patch applies a patch to the stored object and updates it, as
// kube-apiserver does: against the object's current state, retried when a
// concurrent write wins unless the patch itself names the
// resourceVersion it applies to (a 409 Conflict when that is stale).
func (h *handler) patch(w http.ResponseWriter, r *http.Request, req request) {
	var opts metav1.PatchOptions
	if err := h.writeOptions(r, &opts, false); err != nil {
		h.writeError(w, r, err)
		return
	}
	pt := mediaType(r)
	accepted := patchTypes(req.res.Unstructured)
	if !slices.Contains(accepted, pt) {
		h.writeError(w, r, errUnsupportedMediaType(accepted))
		return
	}
	if errs := metavalidation.ValidatePatchOptions(&opts, types.PatchType(pt)); len(errs) > 0 {
		h.writeError(w, r, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs))
		return
	}
	uopts := metav1.UpdateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager}
	body, err := readBody(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	warned := false
	for attempt := 1; ; attempt++ {
		out, retry, err := h.patchOnce(w, r, req, types.PatchType(pt), body, uopts, &warned)
		if retry && attempt < patchAttempts {
			continue
		}
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		h.writeObject(w, r, req, http.StatusOK, out)
		return
	}
}

// patchOnce patches the current object; retry reports a conflict with a
// concurrent write that another attempt may not meet. warned is set once
// the patched object's fields have been validated (fieldErrors), so that a
// retry adds no second set of warnings.
func (h *handler) patchOnce(w http.ResponseWriter, r *http.Request, req request, pt types.PatchType, patch []byte, opts metav1.UpdateOptions, warned *bool) (out runtime.Object, retry bool, err error) {
	cur, err := h.srv.Get(r.Context(), req.res.GVR, req.namespace, req.name)
	if err != nil {
		return nil, false, err
	}
	cm, _ := meta.Accessor(cur)
	curJSON, err := runtime.Encode(h.encoder(request{res: req.res}).codec, cur)
	if err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	patchedJSON, err := h.applyPatch(req, pt, curJSON, patch)
	if err != nil {
		return nil, false, err
	}
	gvk := req.res.GVR.GroupVersion().WithKind(req.res.Kind)
	var obj runtime.Object
	if req.res.Unstructured {
		obj, err = decodeUnstructured(patchedJSON, gvk)
	} else {
		obj, err = h.decodeTyped(patchedJSON, gvk)
	}
	if err != nil {
		return nil, false, apierrors.NewBadRequest(err.Error())
	}
	if !req.res.Unstructured && h.strictJSON != nil && !*warned {
		// As kube-apiserver's patcher: the patched object's unknown
		// fields are a 422 on the patch (Strict) or warnings (Warn), once.
		err := fieldErrors(w, r, h.strictJSON, patchedJSON, gvk, func(strict error) error {
			var shown any
			_ = json.Unmarshal(patch, &shown)
			return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
				field.Invalid(field.NewPath("patch"), fmt.Sprintf("%+v", shown), strict.Error()),
			})
		})
		if err != nil {
			return nil, false, err
		}
		*warned = true
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, false, apierrors.NewBadRequest(err.Error())
	}
	if err := matchName(m, req); err != nil {
		return nil, false, err
	}
	if err := matchNamespace(m, req); err != nil {
		return nil, false, err
	}
	if obj, err = h.prepareWrite(req, cur, obj); err != nil {
		return nil, false, err
	}
	if m, err = meta.Accessor(obj); err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	// A patch that leaves resourceVersion as it was applies to whatever
	// the object is by the time it is stored: a concurrent write is
	// retried. One that changes it names the version it applies to (a 409
	// when that is stale); one that removes it updates unconditionally.
	retryable := m.GetResourceVersion() == cm.GetResourceVersion()
	out, err = h.srv.UpdateWith(r.Context(), obj, opts)
	if err != nil {
		return nil, retryable && apierrors.IsConflict(err), err
	}
	return out, false, nil
}

// decodeTyped decodes JSON as an object of the server's scheme of kind gvk.
func (h *handler) decodeTyped(data []byte, gvk schema.GroupVersionKind) (runtime.Object, error) {
	obj, got, err := h.codecs.UniversalDeserializer().Decode(data, &gvk, nil)
	if err != nil {
		return nil, err
	}
	if *got != gvk {
		return nil, fmt.Errorf("the patched object's kind (%s) is not the resource's (%s)", got, gvk)
	}
	return obj, nil
}

// applyPatch applies patch to the JSON of the current object, with
// kube-apiserver's codes for its failures: 400 for a patch that cannot be
// read, 422 for one that cannot be applied.
func (h *handler) applyPatch(req request, pt types.PatchType, cur, patch []byte) ([]byte, error) {
	switch pt {
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		out, err := p.Apply(cur)
		if err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
		return out, nil
	case types.MergePatchType:
		out, err := jsonpatch.MergePatch(cur, patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return out, nil
	default: // strategic merge patch, typed resources only
		schemaObj, err := h.newObject(req.res)
		if err != nil {
			return nil, err
		}
		out, err := strategicpatch.StrategicMergePatch(cur, patch, schemaObj)
		switch {
		case err == nil:
			return out, nil
		case err == mergepatch.ErrNoListOfLists || err == mergepatch.ErrPatchContentNotMatchRetainKeys:
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
		return nil, apierrors.NewBadRequest(err.Error())
	}
}
