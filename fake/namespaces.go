package fake

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
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
// produce no event.
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
	if _, ok := s.namespaces[namespace]; ok {
		return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "namespaces"}, namespace)
	}
	s.namespaces[namespace] = struct{}{}
	klog.FromContext(ctx).V(5).Info("fake: created namespace", "namespace", namespace)
	return nil
}

// checkNamespaceLocked is the namespace-lifecycle admission check of a
// create: with Options.RequireNamespaces, a namespaced object's namespace
// must have been created. Called with mu held.
func (s *Server) checkNamespaceLocked(r *resourceState, namespace string) error {
	if !s.opts.RequireNamespaces || !r.cfg.Namespaced {
		return nil
	}
	if _, ok := s.namespaces[namespace]; !ok {
		return errNamespaceNotFound(namespace)
	}
	return nil
}
