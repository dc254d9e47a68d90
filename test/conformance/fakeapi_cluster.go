package conformance

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/fake"
)

// FakeAPICluster is a Cluster that talks to a fake.Server over its REST
// API (package fake/fakeapi) with the very clientset calls RealCluster
// makes to a kube-apiserver, so that a spec run on it checks fakeapi's
// HTTP path (encoding, options, Status bodies) against the real server.
// What has no REST path on the fake goes to the fake.Server directly:
// namespaces (not a served resource), the unprivileged user's 403 (an
// injected fault: the fake has no RBAC) and compaction.
type FakeAPICluster struct {
	// RealCluster makes every request, over cfg.
	*RealCluster
	// fake is the same server without REST, for the rest.
	fake *FakeCluster
}

// NewFakeAPICluster returns a Cluster over srv served at cfg (as
// fakeapi.Serve or fakeapi.ServeTest return it); srv must serve ConfigMaps
// and Secrets (see FakeOptions).
func NewFakeAPICluster(srv *fake.Server, cfg *rest.Config) (*FakeAPICluster, error) {
	if srv == nil || cfg == nil {
		return nil, errors.New("conformance: NewFakeAPICluster needs a server and its config")
	}
	rc, err := NewRealCluster(RealOptions{Admin: cfg, Unprivileged: cfg})
	if err != nil {
		return nil, err
	}
	return &FakeAPICluster{RealCluster: rc, fake: NewFakeCluster(srv)}, nil
}

// Name implements Cluster.
func (c *FakeAPICluster) Name() string { return "fakeapi" }

// NewNamespace implements Cluster on the fake.Server.
func (c *FakeAPICluster) NewNamespace(ctx context.Context) (string, error) {
	return c.fake.NewNamespace(ctx)
}

// DeleteNamespace implements Cluster on the fake.Server.
func (c *FakeAPICluster) DeleteNamespace(ctx context.Context, namespace string) error {
	return c.fake.DeleteNamespace(ctx, namespace)
}

// UnprivilegedListConfigMaps implements Cluster: the fake's injected 403,
// then the list over REST.
func (c *FakeAPICluster) UnprivilegedListConfigMaps(ctx context.Context, namespace string, opts metav1.ListOptions) (*corev1.ConfigMapList, error) {
	if err := c.fake.srv.FailNext(fake.Failure{Resource: configMapsGVR, Verbs: fake.VerbList, Times: 1, Kind: fake.Forbidden}); err != nil {
		return nil, err
	}
	return c.ListConfigMaps(ctx, namespace, opts)
}

// UnprivilegedWatchConfigMaps implements Cluster like
// UnprivilegedListConfigMaps.
func (c *FakeAPICluster) UnprivilegedWatchConfigMaps(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	if err := c.fake.srv.FailNext(fake.Failure{Resource: configMapsGVR, Verbs: fake.VerbWatch, Times: 1, Kind: fake.Forbidden}); err != nil {
		return nil, err
	}
	return c.WatchConfigMaps(ctx, namespace, opts)
}

// Compact implements Cluster with fake.Server.Compact.
func (c *FakeAPICluster) Compact(ctx context.Context, namespace string) (string, error) {
	return c.fake.Compact(ctx, namespace)
}
