package testapiserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// crds is the resource of CustomResourceDefinitions.
var crds = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallCRD installs a namespaced custom resource of kind gvk (plural:
// the kind in lower case plus "s"; any content: its schema preserves
// unknown fields) and returns its resource once the server serves it.
func (s *Server) InstallCRD(ctx context.Context, gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	dyn, err := dynamic.NewForConfig(s.AdminConfig())
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return InstallCRD(ctx, dyn, gvk)
}

// InstallCRD is [Server.InstallCRD] through dyn (with the rights to create
// CRDs); a CRD already there is kept.
func InstallCRD(ctx context.Context, dyn dynamic.Interface, gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	plural := strings.ToLower(gvk.Kind) + "s"
	gvr := gvk.GroupVersion().WithResource(plural)
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + "." + gvk.Group},
		"spec": map[string]any{
			"group": gvk.Group, "scope": "Namespaced",
			"names": map[string]any{"plural": plural, "singular": strings.ToLower(gvk.Kind), "kind": gvk.Kind, "listKind": gvk.Kind + "List"},
			"versions": []any{map[string]any{"name": gvk.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := dyn.Resource(crds).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return gvr, fmt.Errorf("creating the CRD of %s: %w", gvk, err)
	}
	for {
		_, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil {
			return gvr, nil
		}
		select {
		case <-ctx.Done():
			return gvr, fmt.Errorf("%s is not served: %w", gvr, err)
		case <-time.After(50 * time.Millisecond): // polling the server
		}
	}
}
