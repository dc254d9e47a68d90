package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/informer"
)

// Specs on the shared server that run listwatch's informer and client-go's
// side by side on the same namespace and record both outcomes.
var _ = Describe("Informers side by side", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
	})

	It("sync 10,000 ConfigMaps and equal a quorum list", func(ctx SpecContext) {
		cs := adminClient()
		took := createConfigMaps(ctx, cs, ns, "cm", 10_000, 16)
		GinkgoWriter.Printf("created 10000 ConfigMaps in %v\n", took)

		// One after the other, so that neither's sync time includes the
		// other's work on the 2 shared cores.
		// Streaming (the default on this server) and paginated lists.
		starts := []struct {
			scenario string
			start    func() side
		}{
			{"initial sync 10k", func() side { return startListwatch(server.AdminConfig(), ns, nil) }},
			{"initial sync 10k", func() side { return startClientGo(server.AdminConfig(), ns, false) }},
			{"initial sync 10k paged", func() side { return startListwatch(server.AdminConfig(), ns, paginatedListwatch) }},
			{"initial sync 10k paged", func() side { return startClientGo(server.AdminConfig(), ns, true) }},
		}
		for _, st := range starts {
			t0 := time.Now()
			s := st.start()
			Eventually(s.synced).WithTimeout(3 * time.Minute).Should(BeTrue())
			synced := time.Since(t0)
			awaitConverged(ctx, cs, ns, time.Minute, s)
			Expect(s.events().adds.Load()).To(BeEquivalentTo(10_000))
			Expect(s.events().initialAdds.Load()).To(BeEquivalentTo(10_000))
			record(st.scenario, s, synced, "time to HasSynced")
		}
	}, SpecTimeout(6*time.Minute))

	It("use a streaming list when the server supports WatchList", func(ctx SpecContext) {
		cs := adminClient()
		createConfigMaps(ctx, cs, ns, "cm", 500, 8)
		t0 := time.Now()
		lw, cg := startBoth(server.AdminConfig(), ns)
		synced := map[side]time.Duration{}
		Eventually(func() int {
			for _, s := range []side{lw, cg} {
				if _, ok := synced[s]; !ok && s.synced() {
					synced[s] = time.Since(t0)
				}
			}
			return len(synced)
		}).WithTimeout(time.Minute).Should(Equal(2))
		awaitConverged(ctx, cs, ns, time.Minute, lw, cg)
		for _, s := range []side{lw, cg} {
			reqs := s.requests().snapshot()
			Expect(reqs.Streaming).To(BeEquivalentTo(1), "%s: one watch with sendInitialEvents=true", s.lib())
			Expect(reqs.Lists).To(BeZero(), "%s: no paginated list", s.lib())
			record("streaming list 500", s, synced[s], "time to HasSynced (both at once)")
		}
	})

	It("hand a late handler the cache as initial adds", func(ctx SpecContext) {
		cs := adminClient()
		createConfigMaps(ctx, cs, ns, "cm", 300, 8)
		lw, cg := startBoth(server.AdminConfig(), ns)
		Eventually(func() bool { return lw.synced() && cg.synced() }).WithTimeout(time.Minute).Should(BeTrue())

		var lwLate, cgLate eventCounter
		t0 := time.Now()
		lwReg, err := lw.inf.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
			AddFunc: func(_ *corev1.ConfigMap, initial bool) {
				lwLate.adds.Add(1)
				if initial {
					lwLate.initialAdds.Add(1)
				}
			},
			UpdateFunc: func(_, _ *corev1.ConfigMap) { lwLate.updates.Add(1) },
		}, informer.HandlerOptions{})
		Expect(err).NotTo(HaveOccurred())
		cgReg, err := cg.inf.AddEventHandler(detailedCounter(&cgLate))
		Expect(err).NotTo(HaveOccurred())

		Eventually(lwReg.HasSynced).WithTimeout(30 * time.Second).Should(BeTrue())
		lwTook := time.Since(t0)
		Eventually(cgReg.HasSynced).WithTimeout(30 * time.Second).Should(BeTrue())
		cgTook := time.Since(t0)
		for _, c := range []*eventCounter{&lwLate, &cgLate} {
			Eventually(c.adds.Load).Should(BeEquivalentTo(300))
			Expect(c.initialAdds.Load()).To(BeEquivalentTo(300))
		}

		// After the replay the late handlers follow live changes.
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cm-00007", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		cm.Data = map[string]string{"late": "yes"}
		_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		for _, c := range []*eventCounter{&lwLate, &cgLate} {
			Eventually(c.updates.Load).WithTimeout(30 * time.Second).Should(BeEquivalentTo(1))
		}
		for _, r := range []struct {
			s    side
			c    *eventCounter
			took time.Duration
		}{{lw, &lwLate, lwTook}, {cg, &cgLate, cgTook}} {
			recordRow(resultRow{
				Scenario: "late handler 300", Lib: r.s.lib(), Objects: len(r.s.state()),
				Adds: r.c.adds.Load(), Updates: r.c.updates.Load(), Requests: r.s.requests().snapshot(),
				Converge: r.took, Note: "late handler's events; time to its HasSynced",
			})
		}
	})
})
