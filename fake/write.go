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
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
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
// A deletionTimestamp or deletionGracePeriodSeconds set on obj is dropped,
// as kube-apiserver drops them.
// Writes are the test's hand: faults and Down never affect them.
func (s *Server) Create(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	return s.CreateWith(ctx, obj, metav1.CreateOptions{})
}

// CreateWith is Create with kube-apiserver's CreateOptions: invalid options
// (a dryRun other than [metav1.DryRunAll], a bad fieldManager) are a 422
// Invalid on CreateOptions; with DryRun All it answers the object as Create
// would store it (name generated, uid, creationTimestamp and managedFields
// set) but with an empty resourceVersion, as kube-apiserver answers a dry
// run (or with the resourceVersion obj sets: a dry run, unlike a create,
// does not refuse one), and stores nothing, sends no event and uses up no
// generated name or UID. The other options are not interpreted.
func (s *Server) CreateWith(ctx context.Context, obj runtime.Object, opts metav1.CreateOptions) (runtime.Object, error) {
	if errs := metavalidation.ValidateCreateOptions(&opts); len(errs) > 0 {
		return nil, errInvalidOptions("CreateOptions", errs)
	}
	dryRun := len(opts.DryRun) > 0
	r, cp, m, err := s.admit(obj)
	if err != nil {
		return nil, err
	}
	// kube-apiserver's storage refuses a set resourceVersion; a dry run
	// never reaches it (DryRunnableStorage answers the object as sent).
	if m.GetResourceVersion() != "" && !dryRun {
		return nil, errCreateWithRV()
	}
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	seq := s.uidSeq
	if dryRun {
		defer func() { s.uidSeq = seq }()
	}
	if m.GetName() == "" {
		s.uidSeq++
		m.SetName(fmt.Sprintf("%s%05d", m.GetGenerateName(), s.uidSeq))
	}
	if err := r.validate(m); err != nil {
		return nil, err
	}
	if err := s.checkNamespaceLocked(r, m.GetName(), m.GetNamespace()); err != nil {
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
	if dryRun {
		return cp, nil
	}
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
//
// Of an object being deleted (see [Server.DeleteWith]) the
// deletionTimestamp and deletionGracePeriodSeconds are kept; an update
// that adds a finalizer to it is a 422 Invalid (Forbidden on
// metadata.finalizers), and one that leaves it no finalizers deletes it, as
// kube-apiserver does: a DELETED event carrying the object as last stored,
// and the answer is the object as the update would have written it, at
// its last resource version.
func (s *Server) Update(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	return s.UpdateWith(ctx, obj, metav1.UpdateOptions{})
}

// UpdateWith is Update with kube-apiserver's UpdateOptions: invalid ones
// are a 422 Invalid on UpdateOptions; with DryRun All it answers the object
// as Update would store it, at the stored object's resourceVersion, and
// stores, deletes and sends nothing, as kube-apiserver answers a dry run.
func (s *Server) UpdateWith(ctx context.Context, obj runtime.Object, opts metav1.UpdateOptions) (runtime.Object, error) {
	if errs := metavalidation.ValidateUpdateOptions(&opts); len(errs) > 0 {
		return nil, errInvalidOptions("UpdateOptions", errs)
	}
	dryRun := len(opts.DryRun) > 0
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
	keepDeletion(m, om)
	if err := r.validate(m); err != nil {
		return nil, err
	}
	if errs := validateDeletionUpdate(m, om); len(errs) > 0 {
		return nil, apierrors.NewInvalid(r.gvk.GroupKind(), m.GetName(), errs)
	}
	m.SetUID(om.GetUID())
	m.SetCreationTimestamp(om.GetCreationTimestamp())
	m.SetResourceVersion(om.GetResourceVersion())
	s.manageFields(r, cp, m, om, metav1.NewTime(s.clock.Now().Truncate(time.Second)))
	if apiequality.Semantic.DeepEqual(cp, old) || dryRun {
		return cp, nil
	}
	if finalized(m, om) {
		s.removeLocked(ctx, r, k, old)
		return cp, nil
	}
	rv := s.rv + 1
	m.SetResourceVersion(formatRV(rv))
	r.objects[k] = cp
	s.commitLocked(event{rv: rv, typ: watch.Modified, res: r, key: k, obj: cp, prev: old})
	klog.FromContext(ctx).V(5).Info("fake: updated", "resource", r.cfg.GVR, "key", k, "rv", rv)
	return cp.DeepCopyObject(), nil
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
