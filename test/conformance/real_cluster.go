package conformance

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// RealOptions configures NewRealCluster.
type RealOptions struct {
	// Admin is a config for a user that may do anything; required.
	Admin *rest.Config
	// Unprivileged is a config for a user with no RBAC permissions;
	// required.
	Unprivileged *rest.Config
	// CompactionTimeout bounds Compact's wait for the apiserver's own
	// compactor (started with a short --etcd-compaction-interval) to pass
	// the marker. Zero means the server does not compact soon enough to
	// wait for, and Compact fails at once.
	CompactionTimeout time.Duration
	// CompactionPoll is how often Compact checks; zero means 250ms.
	CompactionPoll time.Duration
}

// RealCluster is a Cluster backed by a real kube-apiserver.
type RealCluster struct {
	// admin and unprivileged are clientsets for RealOptions' configs;
	// never nil.
	admin, unprivileged kubernetes.Interface
	// opts is the validated configuration; immutable.
	opts RealOptions
}

// NewRealCluster returns a Cluster talking to the apiserver of opts.Admin.
func NewRealCluster(opts RealOptions) (*RealCluster, error) {
	if opts.Admin == nil || opts.Unprivileged == nil {
		return nil, errors.New("conformance: RealOptions needs Admin and Unprivileged configs")
	}
	if opts.CompactionTimeout < 0 || opts.CompactionPoll < 0 {
		return nil, errors.New("conformance: negative compaction timeout or poll interval")
	}
	if opts.CompactionPoll == 0 {
		opts.CompactionPoll = 250 * time.Millisecond
	}
	admin, err := kubernetes.NewForConfig(opts.Admin)
	if err != nil {
		return nil, fmt.Errorf("conformance: admin client: %w", err)
	}
	unprivileged, err := kubernetes.NewForConfig(opts.Unprivileged)
	if err != nil {
		return nil, fmt.Errorf("conformance: unprivileged client: %w", err)
	}
	return &RealCluster{admin: admin, unprivileged: unprivileged, opts: opts}, nil
}

// Name implements Cluster.
func (c *RealCluster) Name() string { return "kube-apiserver" }

// NewNamespace implements Cluster with a generated name.
func (c *RealCluster) NewNamespace(ctx context.Context) (string, error) {
	ns, err := c.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "conformance-"},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return ns.Name, nil
}

// DeleteNamespace implements Cluster. No namespace controller runs, so the
// namespace stays Terminating, which is harmless; deleting it again (a
// 409 Conflict while it terminates) is no error.
func (c *RealCluster) DeleteNamespace(ctx context.Context, namespace string) error {
	err := c.admin.CoreV1().Namespaces().Delete(ctx, namespace, metav1.DeleteOptions{})
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// CreateConfigMap implements Cluster.
func (c *RealCluster) CreateConfigMap(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	return c.admin.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
}

// UpdateConfigMap implements Cluster.
func (c *RealCluster) UpdateConfigMap(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	return c.admin.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
}

// GetConfigMap implements Cluster.
func (c *RealCluster) GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	return c.admin.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
}

// DeleteConfigMap implements Cluster.
func (c *RealCluster) DeleteConfigMap(ctx context.Context, namespace, name string, pre *metav1.Preconditions) error {
	return c.admin.CoreV1().ConfigMaps(namespace).Delete(ctx, name, metav1.DeleteOptions{Preconditions: pre})
}

// CreateConfigMapWith implements Cluster.
func (c *RealCluster) CreateConfigMapWith(ctx context.Context, cm *corev1.ConfigMap, opts metav1.CreateOptions) (*corev1.ConfigMap, error) {
	return c.admin.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, opts)
}

// UpdateConfigMapWith implements Cluster.
func (c *RealCluster) UpdateConfigMapWith(ctx context.Context, cm *corev1.ConfigMap, opts metav1.UpdateOptions) (*corev1.ConfigMap, error) {
	return c.admin.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, opts)
}

// PatchConfigMap implements Cluster.
func (c *RealCluster) PatchConfigMap(ctx context.Context, namespace, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions) (*corev1.ConfigMap, error) {
	return c.admin.CoreV1().ConfigMaps(namespace).Patch(ctx, name, pt, data, opts)
}

// DeleteConfigMapWith implements Cluster with the REST client, as the
// typed client drops the answer: a Status when the object is gone, the
// object when the server keeps it.
func (c *RealCluster) DeleteConfigMapWith(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) (*corev1.ConfigMap, error) {
	obj, err := c.admin.CoreV1().RESTClient().Delete().Namespace(namespace).Resource("configmaps").Name(name).
		Body(&opts).Do(ctx).Get()
	if err != nil {
		return nil, err
	}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return o, nil
	case *metav1.Status:
		return nil, nil
	}
	return nil, fmt.Errorf("conformance: delete answered a %T", obj)
}

// CreateSecret implements Cluster.
func (c *RealCluster) CreateSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return c.admin.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}, metav1.CreateOptions{})
}

// request builds a configmaps request that client-go will not retry, so a
// 504 with Retry-After comes back as the server sent it.
func request(client kubernetes.Interface, namespace string, opts metav1.ListOptions) *rest.Request {
	return client.CoreV1().RESTClient().Get().
		Namespace(namespace).
		Resource("configmaps").
		VersionedParams(&opts, scheme.ParameterCodec).
		MaxRetries(0)
}

func list(ctx context.Context, client kubernetes.Interface, namespace string, opts metav1.ListOptions) (*corev1.ConfigMapList, error) {
	out := &corev1.ConfigMapList{}
	if err := request(client, namespace, opts).Do(ctx).Into(out); err != nil {
		return nil, err
	}
	return out, nil
}

func watchRequest(ctx context.Context, client kubernetes.Interface, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return request(client, namespace, opts).Watch(ctx)
}

// ListConfigMaps implements Cluster.
func (c *RealCluster) ListConfigMaps(ctx context.Context, namespace string, opts metav1.ListOptions) (*corev1.ConfigMapList, error) {
	return list(ctx, c.admin, namespace, opts)
}

// WatchConfigMaps implements Cluster.
func (c *RealCluster) WatchConfigMaps(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	return watchRequest(ctx, c.admin, namespace, opts)
}

// UnprivilegedListConfigMaps implements Cluster.
func (c *RealCluster) UnprivilegedListConfigMaps(ctx context.Context, namespace string, opts metav1.ListOptions) (*corev1.ConfigMapList, error) {
	return list(ctx, c.unprivileged, namespace, opts)
}

// UnprivilegedWatchConfigMaps implements Cluster.
func (c *RealCluster) UnprivilegedWatchConfigMaps(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	return watchRequest(ctx, c.unprivileged, namespace, opts)
}

// Compact implements Cluster by waiting for the apiserver's compactor: it
// writes a marker Secret at resource version m, then polls an exact list at
// m-1 until it is 410 Expired. That answer needs both etcd to have
// compacted past m-1 and the watch cache (if any) to have dropped its
// snapshots up to there, which its compactor does every 15 seconds.
func (c *RealCluster) Compact(ctx context.Context, namespace string) (string, error) {
	if c.opts.CompactionTimeout == 0 {
		return "", errors.New("conformance: this apiserver does not compact soon enough (RealOptions.CompactionTimeout is zero)")
	}
	marker, err := c.CreateSecret(ctx, namespace, fmt.Sprintf("compaction-marker-%d", time.Now().UnixNano()))
	if err != nil {
		return "", err
	}
	m, err := strconv.ParseUint(marker.ResourceVersion, 10, 64)
	if err != nil || m < 2 {
		return "", fmt.Errorf("conformance: marker resource version %q is not a number above 1", marker.ResourceVersion)
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.CompactionTimeout)
	defer cancel()
	ticker := time.NewTicker(c.opts.CompactionPoll)
	defer ticker.Stop()
	probe := metav1.ListOptions{ResourceVersion: strconv.FormatUint(m-1, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	start := time.Now()
	for {
		_, err := c.ListConfigMaps(ctx, namespace, probe)
		if apierrors.IsResourceExpired(err) {
			klog.FromContext(ctx).V(2).Info("conformance: compacted", "marker", m, "waited", time.Since(start))
			return marker.ResourceVersion, nil
		}
		if err != nil && ctx.Err() == nil {
			return "", fmt.Errorf("conformance: probing compaction: %w", err)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("conformance: resource version %d not compacted after %v", m-1, c.opts.CompactionTimeout)
		case <-ticker.C:
		}
	}
}
