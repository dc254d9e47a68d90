package crcache_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/listwatch/listwatch/crcache"
	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
	"github.com/listwatch/listwatch/internal/testing/heapattr"
	"github.com/listwatch/listwatch/ondemand"
)

// TestOnReadBytesMatchTheHeap holds crcache's account of an OnRead type
// (OnReadStats, the figure the budget acts on) to the heap on the path
// users run: the default memory options, whose Interner shares strings
// and label maps between the cached metadata. The metadata (objects,
// store, indexes, handler buffers) and the held Secrets are each within
// 15% of what a heap profile attributes to the cache.
func TestOnReadBytesMatchTheHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	ctx := t.Context()
	srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secretsResource}})
	const n = 10000
	for i := range n {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: fmt.Sprint("ns-", i%10), Name: fmt.Sprintf("sh.helm.release.v1.app-%05d.v1", i),
				Labels: map[string]string{"name": fmt.Sprint("app-", i), "owner": "helm", "status": "deployed", "version": "1"},
			},
			Type: "helm.sh/release.v1",
			Data: map[string][]byte{"release": []byte(strings.Repeat("x", 200+(i*37)%4000))},
		}
		if _, err := srv.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fakeapi.ServeTest(t, srv, fakeapi.Options{InMemory: true})
	cfg.QPS = -1
	m := meta.NewDefaultRESTMapper(nil)
	for _, kind := range []string{"Secret", "SecretList"} {
		m.Add(corev1.SchemeGroupVersion.WithKind(kind), meta.RESTScopeNamespace)
	}
	heapattr.Sample(t)
	c, err := crcache.NewWithOptions(crcache.Options{
		OnRead: []crcache.OnRead{{Object: &corev1.Secret{}, Budget: ondemand.Unlimited}},
	})(cfg, cache.Options{Mapper: m})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(klog.NewContext(ctx, logr.Discard()))
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Start(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not start")
	}
	var s corev1.Secret
	// The first read builds the metadata informer and waits for its sync.
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns-0", Name: "sh.helm.release.v1.app-00000.v1"}, &s); err != nil {
		t.Fatal(err)
	}
	synced := attributed(t)
	st, _ := crcache.OnReadStats(c, &corev1.Secret{})
	heldBefore := st.HeldBytes
	within(t, "metadata", st.MetadataBytes, synced)
	for i := 0; i < n; i += 2 {
		if err := c.Get(ctx, client.ObjectKey{Namespace: fmt.Sprint("ns-", i%10), Name: fmt.Sprintf("sh.helm.release.v1.app-%05d.v1", i)}, &s); err != nil {
			t.Fatal(err)
		}
	}
	read := attributed(t)
	st, _ = crcache.OnReadStats(c, &corev1.Secret{})
	if st.Held != n/2 {
		t.Fatalf("%d held; want %d", st.Held, n/2)
	}
	within(t, "held", st.HeldBytes-heldBefore, read-synced)
	runtime.KeepAlive(c)
}

// attributed is what the heap profile attributes to the cache: the live
// bytes allocated under a frame of listwatch's packages, not under the
// fake server's (which holds the server's copy of every Secret).
func attributed(t *testing.T) int64 {
	return heapattr.Live(t, "github.com/listwatch/listwatch/", "github.com/listwatch/listwatch/fake")
}

func within(t *testing.T, what string, reported, measured int64) {
	t.Helper()
	ratio := float64(reported) / float64(measured)
	t.Logf("%s: reported %d bytes, the heap profile attributes %d: %.2fx", what, reported, measured, ratio)
	if ratio < 0.85 || ratio > 1.15 {
		t.Errorf("%s: reported %d bytes, the heap profile attributes %d (%.2fx): outside ±15%%", what, reported, measured, ratio)
	}
}
