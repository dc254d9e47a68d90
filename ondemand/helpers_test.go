package ondemand_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/factory"
	"github.com/listwatch/listwatch/ondemand"
)

var secrets = fake.Resource{GVR: corev1.SchemeGroupVersion.WithResource("secrets"), Kind: "Secret", Namespaced: true}

// env is a fake server served over REST, a metadata informer of its
// Secrets and a Cache over them whose fetches go through the clientset.
type env struct {
	srv     *fake.Server
	cs      kubernetes.Interface
	meta    *informer.Informer[*metav1.PartialObjectMetadata]
	cache   *ondemand.Cache[*corev1.Secret]
	fetcher *counting
}

// counting counts a Fetcher's calls and can be told to answer a stale
// object instead of the server's.
type counting struct {
	inner ondemand.Fetcher[*corev1.Secret]
	gets  atomic.Int64
	lists atomic.Int64
	// stale, when set, is returned by Get instead of the server's answer.
	stale atomic.Pointer[corev1.Secret]
}

func (c *counting) Get(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	c.gets.Add(1)
	if s := c.stale.Load(); s != nil {
		return s.DeepCopy(), nil
	}
	return c.inner.Get(ctx, ns, name)
}

func (c *counting) List(ctx context.Context, ns string, opts metav1.ListOptions) ([]*corev1.Secret, error) {
	c.lists.Add(1)
	return c.inner.List(ctx, ns, opts)
}

// start serves srv (a new one with Secrets if nil), starts the metadata
// informer and the Cache built with opts (Metadata and Fetcher filled in)
// and waits for the sync. Everything stops with ctx.
func start(t *testing.T, ctx context.Context, srv *fake.Server, opts ondemand.Options[*corev1.Secret]) *env {
	t.Helper()
	if srv == nil {
		srv = fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
	}
	cfg := fakeapi.ServeTest(t, srv, fakeapi.Options{InMemory: true})
	cfg.QPS = -1 // no client-side rate limit: the tests count requests, not wait for them
	cs := kubernetes.NewForConfigOrDie(cfg)
	f := factory.New(factory.Options{})
	meta, err := factory.Metadata(f, metadata.NewForConfigOrDie(cfg), secrets.GVR, factory.Selection{}, informer.Options[*metav1.PartialObjectMetadata]{})
	if err != nil {
		t.Fatal(err)
	}
	fetcher := &counting{inner: ondemand.FromClient(func(ns string) ondemand.Client[*corev1.Secret, *corev1.SecretList] {
		return cs.CoreV1().Secrets(ns)
	})}
	opts.Metadata, opts.Fetcher = ondemand.MetadataOf(meta), fetcher
	opts.Resource = corev1.Resource("secrets")
	c, err := ondemand.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	t.Cleanup(func() { <-done; f.Shutdown() })
	if err := f.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, cs: cs, meta: meta, cache: c, fetcher: fetcher}
}

func secret(ns, name string, data string, lbls map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls},
		Data: map[string][]byte{"key": []byte(data)}}
}

// create writes s to the fake and returns the stored copy.
func create(t *testing.T, srv *fake.Server, s *corev1.Secret) *corev1.Secret {
	t.Helper()
	out, err := srv.Create(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	return out.(*corev1.Secret)
}

// update writes s (with its resourceVersion cleared) and returns the stored copy.
func update(t *testing.T, srv *fake.Server, s *corev1.Secret) *corev1.Secret {
	t.Helper()
	s = s.DeepCopy()
	s.ResourceVersion = ""
	out, err := srv.Update(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	return out.(*corev1.Secret)
}

// caughtUp waits until the metadata cache has reached the server's
// current resource version.
func (e *env) caughtUp(t *testing.T) {
	t.Helper()
	if err := e.meta.WaitForResourceVersion(t.Context(), e.srv.ResourceVersion()); err != nil {
		t.Fatal(err)
	}
}

func dataOf(s *corev1.Secret) string { return string(s.Data["key"]) }

func name(i int) string { return fmt.Sprintf("s-%03d", i) }

func contextWithTimeout(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), d)
}
