package fake

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/internal/nilcheck"
)

// Create stores a copy of obj as a new object and returns the stored copy,
// with its resource version, UID and creation timestamp set (and
// metadata.managedFields when Options.FieldManager is set). The resource is
// found from obj's kind. Errors are apierrors StatusErrors, as
// kube-apiserver's: AlreadyExists; Invalid for metadata that fails
// apimachinery's validation (no name, a bad name, label or annotation, wrong
// namespace scoping); NotFound on the namespace when Options.RequireNamespaces
// is set and it was never created; a bare 500 for a set resourceVersion.
// Writes are the test's hand: faults and Down never affect them.
func (s *Server) Create(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	r, cp, m, err := s.admit(obj)
	if err != nil {
		return nil, err
	}
	if m.GetResourceVersion() != "" {
		return nil, errCreateWithRV()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.GetName() == "" {
		s.uidSeq++
		m.SetName(fmt.Sprintf("%s%05d", m.GetGenerateName(), s.uidSeq))
	}
	if err := r.validate(m); err != nil {
		return nil, err
	}
	if err := s.checkNamespaceLocked(r, m.GetNamespace()); err != nil {
		return nil, err
	}
	k := key(m.GetNamespace(), m.GetName())
	if _, ok := r.objects[k]; ok {
		return nil, apierrors.NewAlreadyExists(r.groupResource(), m.GetName())
	}
	s.uidSeq++
	m.SetUID(s.newUIDLocked())
	now := metav1.NewTime(s.clock.Now().Truncate(time.Second))
	m.SetCreationTimestamp(now)
	s.manageFields(r, cp, m, nil, now)
	rv := s.rv + 1
	m.SetResourceVersion(formatRV(rv))
	r.objects[k] = cp
	s.commitLocked(event{rv: rv, typ: watch.Added, res: r, key: k, obj: cp})
	klog.FromContext(ctx).V(5).Info("fake: created", "resource", r.cfg.GVR, "key", k, "rv", rv)
	return cp.DeepCopyObject(), nil
}

// Update replaces the stored object with a copy of obj and returns the
// stored copy. A UID set on obj is a storage precondition (409 Conflict
// with kube-apiserver's StorageError text on mismatch); a resourceVersion is
// an optimistic-concurrency precondition (409 Conflict "the object has been
// modified"). UID and creation timestamp are kept from the stored object.
// The metadata is validated as on Create (422 Invalid). An update that
// changes nothing is a no-op, as in kube-apiserver: no new resource version
// and no event. A missing object is a 404 NotFound.
func (s *Server) Update(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	r, cp, m, err := s.admit(obj)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, old, om, err := r.storedLocked(m)
	if err != nil {
		return nil, err
	}
	if uid := m.GetUID(); uid != "" && uid != om.GetUID() {
		return nil, errUpdateUID(r, m.GetNamespace(), m.GetName(), uid, om.GetUID())
	}
	if want := m.GetResourceVersion(); want != "" && want != om.GetResourceVersion() {
		return nil, errConflict(r, m.GetName(), msgModified)
	}
	if err := r.validate(m); err != nil {
		return nil, err
	}
	m.SetUID(om.GetUID())
	m.SetCreationTimestamp(om.GetCreationTimestamp())
	m.SetResourceVersion(om.GetResourceVersion())
	s.manageFields(r, cp, m, om, metav1.NewTime(s.clock.Now().Truncate(time.Second)))
	if apiequality.Semantic.DeepEqual(cp, old) {
		return old.DeepCopyObject(), nil
	}
	rv := s.rv + 1
	m.SetResourceVersion(formatRV(rv))
	r.objects[k] = cp
	s.commitLocked(event{rv: rv, typ: watch.Modified, res: r, key: k, obj: cp, prev: old})
	klog.FromContext(ctx).V(5).Info("fake: updated", "resource", r.cfg.GVR, "key", k, "rv", rv)
	return cp.DeepCopyObject(), nil
}

// Delete removes the object with obj's namespace and name and returns its
// last state, carrying the deletion's resource version. A resourceVersion or
// UID set on obj is a precondition: on mismatch a 409 Conflict worded as
// kube-apiserver's ("Operation cannot be fulfilled on ConfigMap "a": the UID
// in the precondition (X) does not match the UID in record (Y). ...", on the
// kind). A missing object is a 404 NotFound.
func (s *Server) Delete(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	r, _, m, err := s.admit(obj)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, old, om, err := r.storedLocked(m)
	if err != nil {
		return nil, err
	}
	if uid := m.GetUID(); uid != "" && uid != om.GetUID() {
		return nil, errDeletePrecondition(r, m.GetName(), fmt.Sprintf(
			"the UID in the precondition (%s) does not match the UID in record (%s). "+
				"The object might have been deleted and then recreated", uid, om.GetUID()))
	}
	if want := m.GetResourceVersion(); want != "" && want != om.GetResourceVersion() {
		return nil, errDeletePrecondition(r, m.GetName(), fmt.Sprintf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). "+
				"The object might have been modified", want, om.GetResourceVersion()))
	}
	rv := s.rv + 1
	gone := withRV(old, rv)
	delete(r.objects, k)
	s.commitLocked(event{rv: rv, typ: watch.Deleted, res: r, key: k, obj: gone, prev: old})
	klog.FromContext(ctx).V(5).Info("fake: deleted", "resource", r.cfg.GVR, "key", k, "rv", rv)
	return gone.DeepCopyObject(), nil
}

// DeleteCollection deletes the objects of gvr in namespace ("" for every
// namespace) that match opts' label and field selectors (its other fields
// are ignored), in key order, each a write of its own at the next resource
// version as a delete is, and returns them as they were before, in the
// resource's list type at the resource version before the first delete,
// as kube-apiserver answers a deletecollection. An unserved resource is a
// 404, a bad selector a 400. Like the other writes it is never faulted.
func (s *Server) DeleteCollection(ctx context.Context, gvr GVR, namespace string, opts metav1.ListOptions) (runtime.Object, error) {
	r, err := s.resource(gvr)
	if err != nil {
		return nil, err
	}
	pred, err := newPredicate(r, namespace, metav1.ListOptions{LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector}, ShardSelectorsIgnored)
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
		old := r.objects[k]
		rv := s.rv + 1
		delete(r.objects, k)
		s.commitLocked(event{rv: rv, typ: watch.Deleted, res: r, key: k, obj: withRV(old, rv), prev: old})
		klog.FromContext(ctx).V(5).Info("fake: deleted", "resource", r.cfg.GVR, "key", k, "rv", rv)
	}
	return list, nil
}

// Get returns a copy of the stored object, or a 404 NotFound.
func (s *Server) Get(_ context.Context, gvr GVR, namespace, name string) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.resource(gvr)
	if err != nil {
		return nil, err
	}
	obj, ok := r.objects[key(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(r.groupResource(), name)
	}
	return obj.DeepCopyObject(), nil
}

// admit resolves obj's resource and returns a private copy to store.
func (s *Server) admit(obj runtime.Object) (*resourceState, runtime.Object, metav1.Object, error) {
	if nilcheck.Is(obj) {
		return nil, nil, nil, apierrors.NewBadRequest("fake: nil object")
	}
	gvk, err := kindOf(s.opts.Scheme, obj)
	if err != nil {
		return nil, nil, nil, apierrors.NewBadRequest(err.Error())
	}
	r := s.byKind[gvk]
	if r == nil {
		return nil, nil, nil, apierrors.NewBadRequest(fmt.Sprintf("fake: no served resource has kind %v", gvk))
	}
	cp, m, err := r.admit(obj)
	if err != nil {
		return nil, nil, nil, err
	}
	return r, cp, m, nil
}

// withRV returns a copy of obj with its resource version set to rv.
func withRV(obj runtime.Object, rv uint64) runtime.Object {
	cp := obj.DeepCopyObject()
	m, _ := meta.Accessor(cp)
	m.SetResourceVersion(formatRV(rv))
	return cp
}

// storedLocked returns the key, the stored object and its metadata for the
// object named by m, or a 404 NotFound; s.mu is held.
func (r *resourceState) storedLocked(m metav1.Object) (string, runtime.Object, metav1.Object, error) {
	k := key(m.GetNamespace(), m.GetName())
	old, ok := r.objects[k]
	if !ok {
		return "", nil, nil, apierrors.NewNotFound(r.groupResource(), m.GetName())
	}
	om, _ := meta.Accessor(old)
	return k, old, om, nil
}

// newUIDLocked is the UID of the object being created, the uidSeq-th: the
// sequence in the last 12 digits by default, or with Options.UIDSeed a
// random version-4 UUID, as kube-apiserver's are, drawn from a generator
// seeded with it (reproducible).
func (s *Server) newUIDLocked() types.UID {
	if s.opts.UIDSeed == 0 {
		return types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", s.uidSeq))
	}
	r := rand.New(rand.NewPCG(s.opts.UIDSeed, s.uidSeq))
	a, b := r.Uint64(), r.Uint64()
	a = a&^0xf000 | 0x4000     // version 4
	b = b&^(0xc<<60) | 0x8<<60 // variant 10
	return types.UID(fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", a>>32, a>>16&0xffff, a&0xffff, b>>48, b&0xffffffffffff))
}
