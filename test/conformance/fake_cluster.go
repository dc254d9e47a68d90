package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
)

var (
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secretsGVR    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// FakeCluster is a Cluster backed by a fake.Server.
type FakeCluster struct {
	// srv serves configmaps and secrets; never nil.
	srv *fake.Server
	// rest is a clientset on fakeapi's handler for srv, called in-process
	// (no connection, no goroutine), for what only the REST API has.
	rest kubernetes.Interface
	// namespaces counts NewNamespace calls, to make unique names.
	namespaces atomic.Int64
}

// NewFakeCluster returns a Cluster over srv, which must serve ConfigMaps
// and Secrets (see FakeOptions).
func NewFakeCluster(srv *fake.Server) *FakeCluster {
	h := fakeapi.Handler(srv, fakeapi.Options{})
	cfg := &rest.Config{Host: "http://fakeapi.in-process", Transport: handlerTransport{h}}
	return &FakeCluster{srv: srv, rest: kubernetes.NewForConfigOrDie(cfg)}
}

// handlerTransport answers a request by calling its handler in the
// caller's goroutine; enough for requests whose answer is not a stream.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

// FakeOptions are fake.Options with the resources a FakeCluster needs
// (typed ConfigMaps and Secrets) and the fidelity options a real apiserver
// has on: namespaces must exist (NewNamespace creates them) and writes record
// managedFields for the test binary, as kube-apiserver does for its user
// agent.
func FakeOptions() fake.Options {
	return fake.Options{
		Resources: []fake.Resource{
			fake.ConfigMaps(),
			{GVR: secretsGVR, Kind: "Secret", Namespaced: true},
		},
		RequireNamespaces: true,
		FieldManager:      "conformance.test",
		ShardSelectors:    fake.ShardSelectorsApplied, // the shared apiserver has the gate on
	}
}

// Server returns the underlying fake server.
func (c *FakeCluster) Server() *fake.Server { return c.srv }

// Name implements Cluster.
func (c *FakeCluster) Name() string { return "fake" }

// NewNamespace implements Cluster: a fresh name, created on the server
// (which matters when it was built with Options.RequireNamespaces).
func (c *FakeCluster) NewNamespace(ctx context.Context) (string, error) {
	ns := fmt.Sprintf("conformance-%d", c.namespaces.Add(1))
	return ns, c.srv.CreateNamespace(ctx, ns)
}

// DeleteNamespace implements Cluster with fake.Server.DeleteNamespace; a
// namespace already gone is no error.
func (c *FakeCluster) DeleteNamespace(ctx context.Context, namespace string) error {
	if err := c.srv.DeleteNamespace(ctx, namespace); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// CreateConfigMap implements Cluster.
func (c *FakeCluster) CreateConfigMap(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	obj, err := c.srv.Create(ctx, cm)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ConfigMap), nil
}

// UpdateConfigMap implements Cluster.
func (c *FakeCluster) UpdateConfigMap(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	obj, err := c.srv.Update(ctx, cm)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ConfigMap), nil
}

// GetConfigMap implements Cluster.
func (c *FakeCluster) GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	obj, err := c.srv.Get(ctx, configMapsGVR, namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ConfigMap), nil
}

// DeleteConfigMap implements Cluster: the fake takes preconditions from the
// object's resourceVersion and UID.
func (c *FakeCluster) DeleteConfigMap(ctx context.Context, namespace, name string, pre *metav1.Preconditions) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if pre != nil && pre.ResourceVersion != nil {
		cm.ResourceVersion = *pre.ResourceVersion
	}
	if pre != nil && pre.UID != nil {
		cm.UID = *pre.UID
	}
	_, err := c.srv.Delete(ctx, cm)
	return err
}

// CreateConfigMapWith implements Cluster.
func (c *FakeCluster) CreateConfigMapWith(ctx context.Context, cm *corev1.ConfigMap, opts metav1.CreateOptions) (*corev1.ConfigMap, error) {
	obj, err := c.srv.CreateWith(ctx, cm, opts)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ConfigMap), nil
}

// UpdateConfigMapWith implements Cluster.
func (c *FakeCluster) UpdateConfigMapWith(ctx context.Context, cm *corev1.ConfigMap, opts metav1.UpdateOptions) (*corev1.ConfigMap, error) {
	obj, err := c.srv.UpdateWith(ctx, cm, opts)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ConfigMap), nil
}

// PatchConfigMap implements Cluster. The fake.Server has no patch of its
// own: patches are fakeapi's, served in-process by its handler.
func (c *FakeCluster) PatchConfigMap(ctx context.Context, namespace, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions) (*corev1.ConfigMap, error) {
	return c.rest.CoreV1().ConfigMaps(namespace).Patch(ctx, name, pt, data, opts)
}

// DeleteConfigMapWith implements Cluster.
func (c *FakeCluster) DeleteConfigMapWith(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) (*corev1.ConfigMap, error) {
	obj, deleted, err := c.srv.DeleteWith(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}, opts)
	if err != nil || deleted {
		return nil, err
	}
	return obj.(*corev1.ConfigMap), nil
}

// CreateSecret implements Cluster.
func (c *FakeCluster) CreateSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	obj, err := c.srv.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}})
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Secret), nil
}

func (c *FakeCluster) lw(namespace string) *fake.ListerWatcher {
	return c.srv.ListerWatcher(fake.LWOptions{Resource: configMapsGVR, Namespace: namespace})
}

// ListConfigMaps implements Cluster.
func (c *FakeCluster) ListConfigMaps(ctx context.Context, namespace string, opts metav1.ListOptions) (*corev1.ConfigMapList, error) {
	obj, err := c.lw(namespace).ListWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ConfigMapList), nil
}

// WatchConfigMaps implements Cluster.
func (c *FakeCluster) WatchConfigMaps(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	return c.lw(namespace).WatchWithContext(ctx, opts)
}

// UnprivilegedListConfigMaps implements Cluster with the fake's injected
// 403, which is what a user without RBAC permissions gets.
func (c *FakeCluster) UnprivilegedListConfigMaps(ctx context.Context, namespace string, opts metav1.ListOptions) (*corev1.ConfigMapList, error) {
	if err := c.srv.FailNext(fake.Failure{Resource: configMapsGVR, Verbs: fake.VerbList, Times: 1, Kind: fake.Forbidden}); err != nil {
		return nil, err
	}
	return c.ListConfigMaps(ctx, namespace, opts)
}

// UnprivilegedWatchConfigMaps implements Cluster like
// UnprivilegedListConfigMaps.
func (c *FakeCluster) UnprivilegedWatchConfigMaps(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	if err := c.srv.FailNext(fake.Failure{Resource: configMapsGVR, Verbs: fake.VerbWatch, Times: 1, Kind: fake.Forbidden}); err != nil {
		return nil, err
	}
	return c.WatchConfigMaps(ctx, namespace, opts)
}

// Compact implements Cluster with fake.Server.Compact at the marker's
// resource version.
func (c *FakeCluster) Compact(ctx context.Context, namespace string) (string, error) {
	marker, err := c.CreateSecret(ctx, namespace, fmt.Sprintf("compaction-marker-%d", c.namespaces.Add(1)))
	if err != nil {
		return "", err
	}
	if _, err := strconv.ParseUint(marker.ResourceVersion, 10, 64); err != nil {
		return "", fmt.Errorf("marker resource version %q: %w", marker.ResourceVersion, err)
	}
	return marker.ResourceVersion, c.srv.Compact(marker.ResourceVersion)
}
