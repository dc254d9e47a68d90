package fake

import (
	"context"
	"fmt"
	"slices"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
)

// Delete deletes the object with obj's namespace and name as [Server.DeleteWith]
// does with no options (a resourceVersion or UID set on obj is a
// precondition) and returns the object: its last state, carrying the
// deletion's resource version, or, when finalizers keep it, the object as
// now stored, marked as being deleted.
func (s *Server) Delete(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	out, _, err := s.DeleteWith(ctx, obj, metav1.DeleteOptions{})
	return out, err
}

// DeleteWith deletes the object with obj's namespace and name as
// kube-apiserver's registry does, and reports whether it is gone.
//
// A resourceVersion or UID set on obj, and opts.Preconditions, are
// preconditions: on mismatch a 409 Conflict worded as kube-apiserver's
// ("Operation cannot be fulfilled on ConfigMap "a": the UID in the
// precondition (X) does not match the UID in record (Y). ...", on the
// kind). A missing object is a 404 NotFound; invalid options (a
// propagationPolicy that is none of Orphan, Background and Foreground, or
// one set beside orphanDependents, a dryRun other than [metav1.DryRunAll])
// a 422 Invalid on DeleteOptions.
//
// The propagation policy sets the garbage collector's finalizers as the
// registry does: Orphan (or orphanDependents true) adds
// [metav1.FinalizerOrphanDependents], Foreground
// [metav1.FinalizerDeleteDependents], Background removes both, and no
// policy keeps what the object has. No garbage collector runs, so an
// object kept by one of them stays until a test removes it.
//
// An object left with no finalizers is deleted at once: a DELETED event
// with its last state at the deletion's resource version, which is what
// DeleteWith returns, with deleted true. One with finalizers is kept and
// marked as being deleted: metadata.deletionTimestamp set to now (to the
// second) and deletionGracePeriodSeconds to 0 on the first delete (a
// MODIFIED event; a later delete that changes nothing writes nothing), and
// DeleteWith returns it as stored with deleted false. An update that
// removes its last finalizer deletes it (see [Server.Update]). Grace periods
// are not served: every resource deletes as kube-apiserver deletes a
// ConfigMap, or an unscheduled pod.
//
// With DryRun All the answer is the same but nothing is written and no
// event sent; the object is at its stored resourceVersion.
func (s *Server) DeleteWith(ctx context.Context, obj runtime.Object, opts metav1.DeleteOptions) (out runtime.Object, deleted bool, err error) {
	if errs := metavalidation.ValidateDeleteOptions(&opts); len(errs) > 0 {
		return nil, false, errInvalidOptions("DeleteOptions", errs)
	}
	r, _, m, err := s.admit(obj)
	if err != nil {
		return nil, false, err
	}
	if p := opts.Preconditions; p != nil && p.UID != nil {
		m.SetUID(*p.UID)
	}
	if p := opts.Preconditions; p != nil && p.ResourceVersion != nil {
		m.SetResourceVersion(*p.ResourceVersion)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, old, om, err := r.storedLocked(m)
	if err != nil {
		return nil, false, err
	}
	if uid := m.GetUID(); uid != "" && uid != om.GetUID() {
		return nil, false, errDeletePrecondition(r, m.GetName(), fmt.Sprintf(
			"the UID in the precondition (%s) does not match the UID in record (%s). "+
				"The object might have been deleted and then recreated", uid, om.GetUID()))
	}
	if want := m.GetResourceVersion(); want != "" && want != om.GetResourceVersion() {
		return nil, false, errDeletePrecondition(r, m.GetName(), fmt.Sprintf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). "+
				"The object might have been modified", want, om.GetResourceVersion()))
	}
	out, deleted = s.deleteLocked(ctx, r, k, old, &opts)
	return out.DeepCopyObject(), deleted, nil
}

// deleteLocked deletes or marks the stored object old at key k, as
// DeleteWith describes, its preconditions checked; s.mu is held. out may be
// stored: the caller copies it.
func (s *Server) deleteLocked(ctx context.Context, r *resourceState, k string, old runtime.Object, opts *metav1.DeleteOptions) (out runtime.Object, deleted bool) {
	dryRun := len(opts.DryRun) > 0
	om, _ := meta.Accessor(old)
	finalizers := gcFinalizers(om.GetFinalizers(), opts)
	if len(finalizers) == 0 {
		if dryRun {
			return old, true
		}
		return s.removeLocked(ctx, r, k, old), true
	}
	cp := old.DeepCopyObject()
	m, _ := meta.Accessor(cp)
	m.SetFinalizers(finalizers)
	if m.GetDeletionTimestamp() == nil {
		if m.GetGeneration() > 0 {
			m.SetGeneration(m.GetGeneration() + 1)
		}
		now := metav1.NewTime(s.clock.Now().Truncate(time.Second))
		m.SetDeletionTimestamp(&now)
	}
	var zero int64
	m.SetDeletionGracePeriodSeconds(&zero)
	if dryRun || apiequality.Semantic.DeepEqual(cp, old) {
		return cp, false
	}
	rv := s.rv + 1
	m.SetResourceVersion(formatRV(rv))
	r.objects[k] = cp
	s.commitLocked(event{rv: rv, typ: watch.Modified, res: r, key: k, obj: cp, prev: old})
	klog.FromContext(ctx).V(5).Info("fake: marked for deletion", "resource", r.cfg.GVR, "key", k, "rv", rv, "finalizers", finalizers)
	return cp, false
}

// removeLocked removes the stored object old at key k with a DELETED event
// and returns its last state at the deletion's resource version; s.mu is
// held.
func (s *Server) removeLocked(ctx context.Context, r *resourceState, k string, old runtime.Object) runtime.Object {
	rv := s.rv + 1
	gone := withRV(old, rv)
	delete(r.objects, k)
	s.commitLocked(event{rv: rv, typ: watch.Deleted, res: r, key: k, obj: gone, prev: old})
	klog.FromContext(ctx).V(5).Info("fake: deleted", "resource", r.cfg.GVR, "key", k, "rv", rv)
	if m, _ := meta.Accessor(old); m.GetNamespace() != "" {
		s.namespaceEmptiedLocked(ctx, m.GetNamespace())
	}
	return gone
}

// gcFinalizers are an object's finalizers after a delete with opts, as
// kube-apiserver's registry sets the garbage collector's: an explicit
// orphanDependents or propagationPolicy replaces the orphan and
// foregroundDeletion finalizers with the one it asks for (none for
// Background); no policy keeps them.
func gcFinalizers(have []string, opts *metav1.DeleteOptions) []string {
	var orphan, foreground bool
	//lint:ignore SA1019 orphanDependents is still served
	switch od, pp := opts.OrphanDependents, opts.PropagationPolicy; {
	case od != nil:
		orphan = *od
	case pp != nil:
		orphan, foreground = *pp == metav1.DeletePropagationOrphan, *pp == metav1.DeletePropagationForeground
	default:
		return have
	}
	out := slices.DeleteFunc(slices.Clone(have), func(f string) bool {
		return f == metav1.FinalizerOrphanDependents || f == metav1.FinalizerDeleteDependents
	})
	if orphan {
		out = append(out, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		out = append(out, metav1.FinalizerDeleteDependents)
	}
	return out
}

// keepDeletion keeps the stored object's deletionTimestamp and (when the
// update sets none) deletionGracePeriodSeconds on an update, as
// kube-apiserver's BeforeUpdate does.
func keepDeletion(m, stored metav1.Object) {
	if dt := stored.GetDeletionTimestamp(); dt != nil {
		m.SetDeletionTimestamp(dt)
	}
	if g := stored.GetDeletionGracePeriodSeconds(); g != nil && m.GetDeletionGracePeriodSeconds() == nil {
		m.SetDeletionGracePeriodSeconds(g)
	}
}

// validateDeletionUpdate is kube-apiserver's metadata update validation of
// the deletion fields: no new finalizers on an object being deleted, and
// deletionTimestamp and deletionGracePeriodSeconds immutable.
func validateDeletionUpdate(m, stored metav1.Object) field.ErrorList {
	path := field.NewPath("metadata")
	var errs field.ErrorList
	if stored.GetDeletionTimestamp() != nil {
		errs = append(errs, apivalidation.ValidateNoNewFinalizers(m.GetFinalizers(), stored.GetFinalizers(), path.Child("finalizers"))...)
	}
	errs = append(errs, apivalidation.ValidateImmutableField(m.GetDeletionTimestamp(), stored.GetDeletionTimestamp(), path.Child("deletionTimestamp"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(m.GetDeletionGracePeriodSeconds(), stored.GetDeletionGracePeriodSeconds(), path.Child("deletionGracePeriodSeconds"))...)
	return errs
}

// finalized reports whether an update to m of the stored object deletes
// it: the stored one is being deleted with no grace period left and m has
// no finalizers.
func finalized(m, stored metav1.Object) bool {
	g := stored.GetDeletionGracePeriodSeconds()
	return len(m.GetFinalizers()) == 0 && stored.GetDeletionTimestamp() != nil && (g == nil || *g == 0)
}

// errInvalidOptions is kube-apiserver's 422 for invalid write options.
func errInvalidOptions(kind string, errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
}

// DeleteCollection deletes the objects of gvr in namespace ("" for every
// namespace) that match opts' label and field selectors, as
// [Server.DeleteCollectionWith] does with no delete options.
func (s *Server) DeleteCollection(ctx context.Context, gvr GVR, namespace string, opts metav1.ListOptions) (runtime.Object, error) {
	return s.DeleteCollectionWith(ctx, gvr, namespace, metav1.DeleteOptions{}, opts)
}

// DeleteCollectionWith deletes the objects of gvr in namespace ("" for
// every namespace) that match listOpts' label and field selectors (its
// other fields are ignored), in key order, each as [Server.DeleteWith]
// deletes it with opts (whose preconditions are ignored, as a collection
// has none): a write of its own at the next resource version, or none for
// a dry run. It returns them as they were before, in the resource's list
// type at the resource version before the first delete, as kube-apiserver
// answers a deletecollection. An unserved resource is a 404, a bad
// selector a 400, invalid options a 422. Like the other writes it is never
// faulted.
func (s *Server) DeleteCollectionWith(ctx context.Context, gvr GVR, namespace string, opts metav1.DeleteOptions, listOpts metav1.ListOptions) (runtime.Object, error) {
	opts.Preconditions = nil
	if errs := metavalidation.ValidateDeleteOptions(&opts); len(errs) > 0 {
		return nil, errInvalidOptions("DeleteOptions", errs)
	}
	r, err := s.resource(gvr)
	if err != nil {
		return nil, err
	}
	pred, err := newPredicate(r, namespace, metav1.ListOptions{LabelSelector: listOpts.LabelSelector, FieldSelector: listOpts.FieldSelector}, ShardSelectorsIgnored)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	list, err := s.listLocked(r, pred, listPlan{})
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	for _, item := range items {
		m, _ := meta.Accessor(item)
		k := key(m.GetNamespace(), m.GetName())
		s.deleteLocked(ctx, r, k, r.objects[k], &opts)
	}
	return list, nil
}
