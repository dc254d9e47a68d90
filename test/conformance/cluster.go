package conformance

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// Cluster is the apiserver a conformance spec runs against: the in-memory
// fake (NewFakeCluster) or a real kube-apiserver (NewRealCluster). Every
// spec talks to the server only through this interface, so the same spec
// checks both.
//
// Errors are returned as the server produced them: apierrors StatusErrors
// for API errors. Lists and watches are not retried by the client (a real
// cluster's requests run with client-go's Retry-After retries off), so a
// 504 "Too large resource version" reaches the spec as the server sent it.
type Cluster interface {
	// Name names the implementation in messages.
	Name() string

	// NewNamespace returns a namespace that no other caller gets, so specs
	// sharing a cluster never see each other's objects.
	NewNamespace(ctx context.Context) (string, error)
	// DeleteNamespace removes a namespace made by NewNamespace; again is
	// no error. A real cluster runs no namespace controller: the namespace
	// stays Terminating with its objects. The fake deletes them and then
	// the namespace, as the controller would, unless finalizers hold some.
	DeleteNamespace(ctx context.Context, namespace string) error

	// CreateConfigMap, UpdateConfigMap, GetConfigMap and DeleteConfigMap are
	// the usual writes and read of one ConfigMap. pre, when non-nil, is
	// Delete's resourceVersion/UID precondition.
	CreateConfigMap(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error)
	UpdateConfigMap(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error)
	GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	DeleteConfigMap(ctx context.Context, namespace, name string, pre *metav1.Preconditions) error
	// CreateConfigMapWith, UpdateConfigMapWith and PatchConfigMap are the
	// writes with their options (dry run above all). DeleteConfigMapWith
	// deletes with options and returns the object when the server keeps it
	// (finalizers), nil when it is gone.
	CreateConfigMapWith(ctx context.Context, cm *corev1.ConfigMap, opts metav1.CreateOptions) (*corev1.ConfigMap, error)
	UpdateConfigMapWith(ctx context.Context, cm *corev1.ConfigMap, opts metav1.UpdateOptions) (*corev1.ConfigMap, error)
	PatchConfigMap(ctx context.Context, namespace, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions) (*corev1.ConfigMap, error)
	DeleteConfigMapWith(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) (*corev1.ConfigMap, error)
	// CreateSecret writes an object of a second resource type, to observe
	// that resource versions are global rather than per type.
	CreateSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error)

	// ListConfigMaps and WatchConfigMaps list and watch ConfigMaps in a
	// namespace with arbitrary options.
	ListConfigMaps(ctx context.Context, namespace string, opts metav1.ListOptions) (*corev1.ConfigMapList, error)
	WatchConfigMaps(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error)
	// UnprivilegedListConfigMaps and UnprivilegedWatchConfigMaps do the same
	// as a user that has no RBAC permissions at all.
	UnprivilegedListConfigMaps(ctx context.Context, namespace string, opts metav1.ListOptions) (*corev1.ConfigMapList, error)
	UnprivilegedWatchConfigMaps(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error)

	// Compact compacts the server's history: it writes a marker object in
	// namespace and returns once every resource version below the marker's
	// (which it returns) is gone for exact lists and continue tokens. A
	// cluster that cannot compact returns an error.
	Compact(ctx context.Context, namespace string) (string, error)
}

var (
	_ Cluster = (*FakeCluster)(nil)
	_ Cluster = (*RealCluster)(nil)
	_ Cluster = (*FakeAPICluster)(nil)
)
