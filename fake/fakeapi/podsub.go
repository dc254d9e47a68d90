package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/listwatch/listwatch/fake"
)

// podsGVR is the core pods resource, whose eviction and binding
// subresources are served when it is served typed.
var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

// pdbsGVR is the resource an eviction consults, when served typed.
var pdbsGVR = policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets")

// podSubresource reports whether req is a POST to pods/NAME/eviction or
// pods/NAME/binding of a typed pods resource.
func (h *handler) podSubresource(req request) bool {
	return req.res.GVR == podsGVR && !req.res.Unstructured && (req.subresource == "eviction" || req.subresource == "binding")
}

// createPodSubresource serves POST pods/NAME/eviction and
// pods/NAME/binding as kube-apiserver's pod registry
// (pkg/registry/core/pod/storage): 201 and a Success Status.
func (h *handler) createPodSubresource(w http.ResponseWriter, r *http.Request, req request) {
	body, err := readBody(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	info, ok := runtime.SerializerInfoForMediaType(h.codecs.SupportedMediaTypes(), mediaType(r))
	if !ok {
		h.writeError(w, r, errUnsupportedMediaType(mediaTypes(h.codecs.SupportedMediaTypes())))
		return
	}
	var into runtime.Object = &policyv1.Eviction{}
	if req.subresource == "binding" {
		into = &corev1.Binding{}
	}
	obj, _, err := info.Serializer.Decode(body, nil, into)
	if err != nil {
		h.writeError(w, r, apierrors.NewBadRequest(err.Error()))
		return
	}
	switch o := obj.(type) {
	case *policyv1.Eviction:
		err = h.evict(r, req, o)
	case *corev1.Binding:
		err = h.bind(r, req, o)
	default:
		err = apierrors.NewBadRequest(fmt.Sprintf("not a %T: %T", into, obj))
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated}
	h.writeEncoded(w, r, http.StatusCreated, runtime.ContentTypeJSON, func() ([]byte, error) { return json.Marshal(st) })
}

// evict deletes the pod with the eviction's DeleteOptions, unless a
// PodDisruptionBudget that selects it allows no disruption (429), as the
// eviction registry does; a pod that is pending, terminal or being deleted
// ignores budgets. A budget that allows one is charged for it
// (disruptionsAllowed decremented, the pod in disruptedPods). No
// disruption controller runs: a budget's status is what the test wrote.
func (h *handler) evict(r *http.Request, req request, ev *policyv1.Eviction) error {
	if ev.Name != "" && ev.Name != req.name {
		return apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	cur, err := h.srv.Get(r.Context(), podsGVR, req.namespace, req.name)
	if err != nil {
		return err
	}
	pod := cur.(*corev1.Pod)
	opts := metav1.DeleteOptions{}
	if ev.DeleteOptions != nil {
		opts = *ev.DeleteOptions
	}
	switch {
	case pod.Status.Phase == corev1.PodSucceeded, pod.Status.Phase == corev1.PodFailed,
		pod.Status.Phase == corev1.PodPending, pod.DeletionTimestamp != nil:
	default:
		if err := h.chargeBudget(r, pod, len(opts.DryRun) > 0); err != nil {
			return err
		}
	}
	target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: req.namespace, Name: req.name}}
	_, _, err = h.srv.DeleteWith(r.Context(), target, opts)
	return err
}

// chargeBudget finds the PodDisruptionBudget that selects pod, if any,
// and takes one disruption from it, or refuses the eviction.
func (h *handler) chargeBudget(r *http.Request, pod *corev1.Pod, dryRun bool) error {
	if res, ok := h.byGVR[pdbsGVR]; !ok || res.Unstructured {
		return nil
	}
	list, err := h.srv.ListerWatcher(fake.LWOptions{Resource: pdbsGVR, Namespace: pod.Namespace}).ListWithContext(r.Context(), metav1.ListOptions{})
	if err != nil {
		return err
	}
	var match []policyv1.PodDisruptionBudget
	for _, pdb := range list.(*policyv1.PodDisruptionBudgetList).Items {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		match = append(match, pdb)
	}
	switch {
	case len(match) == 0:
		return nil
	case len(match) > 1:
		return apierrors.NewInternalError(fmt.Errorf("this pod has more than one PodDisruptionBudget, which the eviction subresource does not support"))
	}
	pdb := match[0]
	if pdb.Status.ObservedGeneration < pdb.Generation || pdb.Status.DisruptionsAllowed <= 0 {
		err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    policyv1.DisruptionBudgetCause,
			Message: fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy),
		})
		return err
	}
	if dryRun {
		return nil
	}
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = map[string]metav1.Time{}
	}
	pdb.Status.DisruptedPods[pod.Name] = metav1.Now()
	_, err = h.srv.Update(r.Context(), &pdb)
	if apierrors.IsConflict(err) {
		return apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	}
	return err
}

// bind assigns the pod to the binding's node, as the binding registry
// does: the pod's spec.nodeName, the binding's annotations and the
// PodScheduled condition; a pod already assigned, or being deleted, is a
// 409.
func (h *handler) bind(r *http.Request, req request, b *corev1.Binding) error {
	if b.Name != "" && b.Name != req.name {
		return apierrors.NewBadRequest("name in URL does not match name in Binding object")
	}
	var errs field.ErrorList
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if b.Target.Name == "" {
		errs = append(errs, field.Required(field.NewPath("target", "name"), ""))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Binding").GroupKind(), b.Name, errs)
	}
	cur, err := h.srv.Get(r.Context(), podsGVR, req.namespace, req.name)
	if err != nil {
		return err
	}
	pod := cur.(*corev1.Pod).DeepCopy()
	switch {
	case pod.DeletionTimestamp != nil:
		return apierrors.NewConflict(podsGVR.GroupResource(), req.name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", req.name))
	case pod.Spec.NodeName != "":
		return apierrors.NewConflict(podsGVR.GroupResource(), req.name, fmt.Errorf("pod %s is already assigned to node %q", req.name, pod.Spec.NodeName))
	}
	pod.Spec.NodeName = b.Target.Name
	for k, v := range b.Annotations {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[k] = v
	}
	cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}
	set := false
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodScheduled {
			pod.Status.Conditions[i].Status = corev1.ConditionTrue
			set = true
		}
	}
	if !set {
		pod.Status.Conditions = append(pod.Status.Conditions, cond)
	}
	_, err = h.srv.Update(r.Context(), pod)
	return err
}
