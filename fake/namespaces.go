package fake

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
)

// CreateNamespace makes namespace exist. It matters only with
// Options.RequireNamespaces, where a Create of a namespaced object in a
// namespace never created is a 404 NotFound on the namespace, as from
// kube-apiserver's namespace admission. The name must be a DNS-1123 label
// (422 Invalid); creating it twice is a 409 AlreadyExists. Namespaces are
// not objects of a served resource: they take no resource version and
// produce no event. A namespace DeleteNamespace removed may be created
// again; one still terminating is a 409 AlreadyExists.
func (s *Server) CreateNamespace(ctx context.Context, namespace string) error {
	nsGK := schema.GroupKind{Kind: "Namespace"}
	if namespace == "" {
		return apierrors.NewInvalid(nsGK, "", field.ErrorList{
			field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
	}
	var errs field.ErrorList
	for _, msg := range apivalidation.ValidateNamespaceName(namespace, false) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), namespace, msg))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(nsGK, namespace, errs)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, terminating := s.terminating[namespace]
	if _, ok := s.namespaces[namespace]; ok || terminating {
		return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "namespaces"}, namespace)
	}
	s.namespaces[namespace] = struct{}{}
	klog.FromContext(ctx).V(5).Info("fake: created namespace", "namespace", namespace)
	return nil
}

// DeleteNamespace deletes namespace as kube-apiserver and its namespace
// controller would together, there being no controller to do the second
// half: every object of every served namespaced resource in it is deleted
// as [Server.DeleteWith] deletes it with propagationPolicy Background (a
// DELETED event each, in resource then key order), and the namespace goes
// once it is empty. Objects that finalizers keep stay, marked as being
// deleted; until the last of them goes (the update that removes its last
// finalizer) the namespace is terminating: a create in it is kube-apiserver's
// 403 Forbidden "unable to create new content in namespace ... because it
// is being terminated", and another DeleteNamespace deletes what has come
// free. A namespace neither created with [Server.CreateNamespace] nor
// holding objects is a 404 NotFound. Once gone, a namespace may be created
// again.
func (s *Server) DeleteNamespace(ctx context.Context, namespace string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, created := s.namespaces[namespace]
	if !created && !s.namespaceHasObjectsLocked(namespace) {
		return errNamespaceNotFound(namespace)
	}
	s.terminating[namespace] = struct{}{}
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &background}
	for _, cfg := range s.opts.Resources {
		r := s.resources[cfg.GVR]
		if !cfg.Namespaced {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(r.objects)) {
			if m, _ := meta.Accessor(r.objects[k]); m.GetNamespace() == namespace {
				s.deleteLocked(ctx, r, k, r.objects[k], &opts)
			}
		}
	}
	s.namespaceEmptiedLocked(ctx, namespace)
	return nil
}

// namespaceEmptiedLocked removes a terminating namespace that holds no
// objects any more; s.mu is held.
func (s *Server) namespaceEmptiedLocked(ctx context.Context, namespace string) {
	if _, ok := s.terminating[namespace]; !ok || s.namespaceHasObjectsLocked(namespace) {
		return
	}
	delete(s.terminating, namespace)
	delete(s.namespaces, namespace)
	klog.FromContext(ctx).V(5).Info("fake: deleted namespace", "namespace", namespace)
}

// namespaceHasObjectsLocked reports whether an object of a served
// resource is in namespace; s.mu is held.
func (s *Server) namespaceHasObjectsLocked(namespace string) bool {
	for _, r := range s.resources {
		if !r.cfg.Namespaced {
			continue
		}
		for _, obj := range r.objects {
			if m, _ := meta.Accessor(obj); m.GetNamespace() == namespace {
				return true
			}
		}
	}
	return false
}

// checkNamespaceLocked is the namespace-lifecycle admission check of a
// create: a namespaced object's namespace may not be terminating and, with
// Options.RequireNamespaces, must have been created. Called with mu held.
func (s *Server) checkNamespaceLocked(r *resourceState, name, namespace string) error {
	if !r.cfg.Namespaced {
		return nil
	}
	if _, ok := s.terminating[namespace]; ok {
		return errNamespaceTerminating(r, name, namespace)
	}
	if !s.opts.RequireNamespaces {
		return nil
	}
	if _, ok := s.namespaces[namespace]; !ok {
		return errNamespaceNotFound(namespace)
	}
	return nil
}

// errNamespaceTerminating is kube-apiserver's namespace-lifecycle
// admission's answer to a create in a terminating namespace.
func errNamespaceTerminating(r *resourceState, name, namespace string) error {
	err := apierrors.NewForbidden(r.groupResource(), name,
		fmt.Errorf("unable to create new content in namespace %s because it is being terminated", namespace))
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    corev1.NamespaceTerminatingCause,
		Message: fmt.Sprintf("namespace %s is being terminated", namespace),
		Field:   "metadata.namespace",
	}}
	return err
}
