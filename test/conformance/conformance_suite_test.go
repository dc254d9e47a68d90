package conformance

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// shared is the kube-apiserver every real spec without special flags uses;
// nil under -short.
var shared *testapiserver.Server

func TestConformance(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "listwatch conformance: fake vs kube-apiserver")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	if testing.Short() {
		return // the fake variant runs alone
	}
	var err error
	shared, err = testapiserver.Start(ctx, GinkgoT(), testapiserver.Options{
		// Shard selectors are alpha in v1.36 (shardSpecs).
		ExtraAPIServerArgs: []string{"--feature-gates=ShardedListAndWatch=true"},
	})
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("shared apiserver %s ready in %v\n", shared.URL(), shared.Timings().APIServerReady)
})

var _ = AfterSuite(func() {
	if shared != nil {
		shared.Stop()
	}
})

// fakeVariant runs every spec against a fresh fake.Server.
var fakeVariant = variant{
	name:    "fake",
	fake:    true,
	cluster: func(SpecContext) Cluster { return NewFakeCluster(newFakeServer()) },
}

// fakeAPIVariant runs every spec against a fresh fake.Server served over
// its REST API by fakeapi, through the clientset calls of the real
// variant.
var fakeAPIVariant = variant{
	name: "fakeapi",
	fake: true,
	cluster: func(SpecContext) Cluster {
		srv := newFakeServer()
		cfg, err := fakeapi.Serve(ctxFor(), srv, fakeapi.Options{})
		Expect(err).NotTo(HaveOccurred())
		c, err := NewFakeAPICluster(srv, cfg)
		Expect(err).NotTo(HaveOccurred())
		return c
	},
}

// newFakeServer is a fresh fake.Server of FakeOptions for the current
// spec.
func newFakeServer() *fake.Server {
	GinkgoHelper()
	srv, err := fake.NewServer(FakeOptions())
	Expect(err).NotTo(HaveOccurred())
	// Close watches a spec left open, so their goroutines end.
	DeferCleanup(func() { srv.CloseWatches(fake.GVR{}) })
	return srv
}

// ctxFor is a context that ends with the current spec.
func ctxFor() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	DeferCleanup(cancel)
	return ctx
}

// realVariant runs every spec against the shared apiserver.
var realVariant = variant{
	name: "kube-apiserver",
	cluster: func(SpecContext) Cluster {
		if shared == nil {
			Skip("kube-apiserver: needs a real apiserver; skipped under -short")
		}
		return mustRealCluster(shared, 0)
	},
}

var _ = Describe("fake", func() { registerSpecs(fakeVariant) })

var _ = Describe("fakeapi", func() { registerSpecs(fakeAPIVariant) })

var _ = Describe("kube-apiserver", func() { registerSpecs(realVariant) })

// registerSpecs registers the whole conformance tree for one variant.
func registerSpecs(v variant) {
	e := &env{}
	BeforeEach(func(ctx SpecContext) {
		e.setUp(ctx, v.cluster(ctx))
	})
	listSpecs(v, e)
	paginationSpecs(v, e)
	watchSpecs(v, e)
	bookmarkSpecs(v, e)
	selectorSpecs(v, e)
	errorSpecs(v, e)
	writeSpecs(v, e)
	finalizerSpecs(v, e)
	dryRunSpecs(v, e)
	shardSpecs(v, e)
}

// mustRealCluster wraps srv; compaction > 0 lets Compact wait that long.
func mustRealCluster(srv *testapiserver.Server, compaction time.Duration) Cluster {
	GinkgoHelper()
	c, err := NewRealCluster(RealOptions{
		Admin:             srv.AdminConfig(),
		Unprivileged:      srv.UnprivilegedConfig(),
		CompactionTimeout: compaction,
	})
	Expect(err).NotTo(HaveOccurred())
	return c
}
