package kcm

import (
	"context"
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// forbid lets testapiserver.UnprivilegedUser do everything a controller
// manager does except list and watch gvr: RBAC only adds, so the role
// names every other resource the server serves (discovery) for list and
// watch, and every resource for the other verbs.
func forbid(ctx context.Context, cs kubernetes.Interface, gvr schema.GroupVersionResource) error {
	lists, err := cs.Discovery().ServerPreferredResources()
	if err != nil {
		return fmt.Errorf("discovery: %w", err)
	}
	byGroup := map[string][]string{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return err
		}
		for _, r := range l.APIResources {
			if gv.Group == gvr.Group && r.Name == gvr.Resource {
				continue
			}
			if slices.Contains(r.Verbs, "list") {
				byGroup[gv.Group] = append(byGroup[gv.Group], r.Name)
			}
		}
	}
	name := "kcm-without-" + gvr.Resource
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "create", "update", "patch", "delete", "deletecollection", "impersonate", "bind", "escalate", "approve", "sign", "use"}},
		{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}},
	}}
	for group, resources := range byGroup {
		slices.Sort(resources)
		role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: []string{"list", "watch"}})
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: testapiserver.UnprivilegedUser}}}
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	return err
}
