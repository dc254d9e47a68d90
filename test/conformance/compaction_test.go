package conformance

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// compactionTimeout bounds the wait for a real apiserver to compact: etcd
// compaction lags its 1 s interval by up to two intervals, and the watch
// cache drops its snapshots every 15 s.
const compactionTimeout = 60 * time.Second

// compactionVariant is a cluster that can compact, with or without a
// watch cache in front of etcd.
type compactionVariant struct {
	variant
	// watchCache says watches are served by a watch cache (for the fake,
	// fake.WatchCacheOwnWindow), rather than straight from etcd
	// (fake.WatchCacheDisabled).
	watchCache bool
}

var _ = Describe("fake compaction (watch cache)", Ordered, func() {
	compactionSpecs(compactionVariant{variant: variant{name: "fake", fake: true, cluster: compactingFake(fake.WatchCacheOwnWindow)}, watchCache: true})
})

var _ = Describe("fake compaction (no watch cache)", Ordered, func() {
	compactionSpecs(compactionVariant{variant: variant{name: "fake", fake: true, cluster: compactingFake(fake.WatchCacheDisabled)}, watchCache: false})
})

var _ = Describe("kube-apiserver compaction (watch cache)", Ordered, func() {
	compactionSpecs(compactionVariant{variant: variant{name: "kube-apiserver", cluster: compactingServer(false)}, watchCache: true})
})

var _ = Describe("kube-apiserver compaction (no watch cache)", Ordered, func() {
	compactionSpecs(compactionVariant{variant: variant{name: "kube-apiserver", cluster: compactingServer(true)}, watchCache: false})
})

// compactingFake returns a fresh fake server whose watches are served as
// mode says, like a kube-apiserver with or without its watch cache.
func compactingFake(mode fake.WatchCacheMode) func(SpecContext) Cluster {
	return func(SpecContext) Cluster {
		opts := FakeOptions()
		opts.WatchCache = mode
		srv, err := fake.NewServer(opts)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { srv.CloseWatches(fake.GVR{}) })
		return NewFakeCluster(srv)
	}
}

// compactingServer starts a dedicated apiserver that compacts etcd every
// second; it is stopped when the Ordered container ends.
func compactingServer(noWatchCache bool) func(SpecContext) Cluster {
	return func(ctx SpecContext) Cluster {
		if testing.Short() {
			Skip("kube-apiserver: needs a real apiserver; skipped under -short")
		}
		srv, err := testapiserver.Start(ctx, GinkgoT(), testapiserver.Options{
			EtcdCompactionInterval: time.Second,
			DisableWatchCache:      noWatchCache,
		})
		Expect(err).NotTo(HaveOccurred())
		return mustRealCluster(srv, compactionTimeout)
	}
}

// compactionSpecs share one compaction (slow on a real server): BeforeAll
// writes, takes a first page, compacts, and the specs look at what is left.
func compactionSpecs(v compactionVariant) {
	e := &env{}
	var (
		rvs     []string              // of c, a, e, b, d
		page1   *corev1.ConfigMapList // limit 2, before compaction
		updated *corev1.ConfigMap     // a, updated after rvs[2]
		marker  string                // Compact's marker RV
	)
	BeforeAll(func(ctx SpecContext) {
		e.setUp(ctx, v.cluster(ctx))
		rvs = e.createAll(ctx, "c", "a", "e", "b", "d")
		page1 = e.list(ctx, metav1.ListOptions{Limit: 2})
		updated = e.update(ctx, e.get(ctx, "a"), nil, map[string]string{"k": "v"})
		start := time.Now()
		var err error
		marker, err = e.c.Compact(ctx, e.ns)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("%s: compacted past %s in %v\n", e.c.Name(), marker, time.Since(start))
	}, NodeTimeout(compactionTimeout+30*time.Second))

	v.it("an exact list at a compacted resourceVersion is 410 Expired", func(ctx SpecContext) {
		expired := metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired, Message: "The resourceVersion for the provided list is too old."}
		_, err := e.c.ListConfigMaps(ctx, e.ns, metav1.ListOptions{ResourceVersion: rvs[2], ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		expectStatus(err, expired)
		_, err = e.c.ListConfigMaps(ctx, e.ns, metav1.ListOptions{ResourceVersion: rvs[2], Limit: 2})
		expectStatus(err, expired)
	})

	v.it("a NotOlderThan list or a sendInitialEvents watch at a compacted resourceVersion gets the latest state", func(ctx SpecContext) {
		latest := []string{at(updated), "b@" + rvs[3], "c@" + rvs[0], "d@" + rvs[4], "e@" + rvs[2]}
		l := e.list(ctx, metav1.ListOptions{ResourceVersion: rvs[2], ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
		Expect(items(l)).To(Equal(latest))
		w := e.watch(ctx, metav1.ListOptions{ResourceVersion: rvs[2], ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, SendInitialEvents: ptr.To(true)})
		got := nextDescribed(w, 5)
		for i := range latest {
			latest[i] = "ADDED " + latest[i]
		}
		Expect(got).To(Equal(latest))
	})

	v.it("a continue token from before the compaction is 410 Expired with a token that continues inconsistently", func(ctx SpecContext) {
		_, err := e.c.ListConfigMaps(ctx, e.ns, metav1.ListOptions{Limit: 2, Continue: page1.Continue})
		st := status(err)
		Expect(st.Code).To(BeEquivalentTo(410))
		Expect(st.Reason).To(Equal(metav1.StatusReasonExpired))
		Expect(st.Message).To(Equal("The provided continue parameter is too old to display a consistent list result. " +
			"You can start a new list without the continue parameter, or use the continue token in this response to " +
			"retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - " +
			"objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."))
		Expect(st.Continue).NotTo(BeEmpty())

		rest := e.list(ctx, metav1.ListOptions{Limit: 10, Continue: st.Continue})
		Expect(items(rest)).To(Equal([]string{"c@" + rvs[0], "d@" + rvs[4], "e@" + rvs[2]}))
		Expect(rv(rest.ResourceVersion)).To(BeNumerically(">=", rv(marker)), "the rest is read at the latest resource version")
	})

	if !v.watchCache {
		v.it("without a watch cache, a watch from a compacted resourceVersion gets one in-stream 410 ERROR from etcd", func(ctx SpecContext) {
			w := e.watch(ctx, metav1.ListOptions{ResourceVersion: rvs[2]})
			evs := drain(w, eventTimeout)
			Expect(evs).To(HaveLen(1))
			Expect(evs[0].Type).To(Equal(watch.Error))
			Expect(evs[0].Object).To(Equal(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired,
				Message: "The resourceVersion for the provided watch is too old."}))
		})
	}
	if v.watchCache {
		v.it("with a watch cache, a watch from a compacted resourceVersion still inside the cache replays the events after it", func(ctx SpecContext) {
			w := e.watch(ctx, metav1.ListOptions{ResourceVersion: rvs[2]})
			Expect(nextDescribed(w, 3)).To(Equal([]string{"ADDED b@" + rvs[3], "ADDED d@" + rvs[4], "MODIFIED " + at(updated)}))
		})
	}
}
