package fake

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
)

// Create stores a copy of obj as a new object and returns the stored copy,
// with its resource version, UID and creation timestamp set. The resource is
// found from obj's kind. Errors are apierrors StatusErrors: AlreadyExists,
// Invalid (no name, wrong namespace scoping), BadRequest (resourceVersion
// set). Writes are the test's hand: faults and Down never affect them.
func (s *Server) Create(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	r, cp, m, err := s.admit(obj)
	if err != nil {
		return nil, err
	}
	if m.GetResourceVersion() != "" {
		return nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.GetName() == "" {
		s.uidSeq++
		m.SetName(fmt.Sprintf("%s%05d", m.GetGenerateName(), s.uidSeq))
	}
	k := key(m.GetNamespace(), m.GetName())
	if _, ok := r.objects[k]; ok {
		return nil, apierrors.NewAlreadyExists(r.groupResource(), m.GetName())
	}
	s.uidSeq++
	m.SetUID(types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", s.uidSeq)))
	m.SetCreationTimestamp(metav1.NewTime(s.clock.Now().Truncate(1e9)))
	rv := s.rv + 1
	m.SetResourceVersion(formatRV(rv))
	r.objects[k] = cp
	s.commitLocked(event{rv: rv, typ: watch.Added, res: r, key: k, obj: cp})
	klog.FromContext(ctx).V(5).Info("fake: created", "resource", r.cfg.GVR, "key", k, "rv", rv)
	return cp.DeepCopyObject(), nil
}

// Update replaces the stored object with a copy of obj and returns the
// stored copy. If obj has a resourceVersion it is a precondition: a mismatch
// is a 409 Conflict. UID and creation timestamp are kept from the stored
// object. An update that changes nothing is a no-op, as in kube-apiserver: no
// new resource version and no event. A missing object is a 404 NotFound.
func (s *Server) Update(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	r, cp, m, err := s.admit(obj)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(m.GetNamespace(), m.GetName())
	old, ok := r.objects[k]
	if !ok {
		return nil, apierrors.NewNotFound(r.groupResource(), m.GetName())
	}
	om, _ := meta.Accessor(old)
	if want := m.GetResourceVersion(); want != "" && want != om.GetResourceVersion() {
		return nil, errConflict(r, m.GetName(), msgModified)
	}
	m.SetUID(om.GetUID())
	m.SetCreationTimestamp(om.GetCreationTimestamp())
	m.SetResourceVersion(om.GetResourceVersion())
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
// UID set on obj is a precondition (409 Conflict on mismatch). A missing
// object is a 404 NotFound.
func (s *Server) Delete(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	r, _, m, err := s.admit(obj)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(m.GetNamespace(), m.GetName())
	old, ok := r.objects[k]
	if !ok {
		return nil, apierrors.NewNotFound(r.groupResource(), m.GetName())
	}
	om, _ := meta.Accessor(old)
	if uid := m.GetUID(); uid != "" && uid != om.GetUID() {
		return nil, errConflict(r, m.GetName(), fmt.Sprintf(
			"Precondition failed: UID in precondition: %s, UID in object meta: %s", uid, om.GetUID()))
	}
	if want := m.GetResourceVersion(); want != "" && want != om.GetResourceVersion() {
		return nil, errConflict(r, m.GetName(), fmt.Sprintf(
			"Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s", want, om.GetResourceVersion()))
	}
	rv := s.rv + 1
	gone := withRV(old, rv)
	delete(r.objects, k)
	s.commitLocked(event{rv: rv, typ: watch.Deleted, res: r, key: k, obj: gone, prev: old})
	klog.FromContext(ctx).V(5).Info("fake: deleted", "resource", r.cfg.GVR, "key", k, "rv", rv)
	return gone.DeepCopyObject(), nil
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
	if isNil(obj) {
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
