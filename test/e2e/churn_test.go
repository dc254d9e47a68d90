package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/listwatch/listwatch/informer"
)

// churnEnv names the variable that sets how long the churn spec writes
// (a Go duration, e.g. 20s); the default is two minutes.
const churnEnv = "LISTWATCH_E2E_CHURN"

var _ = Describe("Informers under churn", func() {
	It("follow about 200 writes/s and equal a quorum list at the end", func(ctx SpecContext) {
		d := envDuration(churnEnv, 2*time.Minute)
		ns := newNamespace(ctx)
		cs := adminClient()
		lw, cg := startBoth(server.AdminConfig(), ns)
		Eventually(func() bool { return lw.synced() && cg.synced() }).WithTimeout(time.Minute).Should(BeTrue())

		t0 := time.Now()
		stats := &churnStats{}
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			churn(ctx, cs, ns, d, 200, 8, 250, stats)
		}()
		// A handler joins each informer in the middle of the churn; its
		// view (replayed cache, then live changes) must end equal too.
		Eventually(stats.writes).WithTimeout(d).Should(BeNumerically(">=", int64(d.Seconds()*50)))
		var lwLate, cgLate eventCounter
		_, err := lw.inf.AddHandler(lwViewHandler(&lwLate), informer.HandlerOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = cg.inf.AddEventHandler(detailedCounter(&cgLate))
		Expect(err).NotTo(HaveOccurred())
		Eventually(done).WithTimeout(d + time.Minute).Should(BeClosed())
		elapsed := time.Since(t0)
		rate := float64(stats.writes()) / elapsed.Seconds()
		GinkgoWriter.Printf("churn: %s in %v (%.0f writes/s)\n", stats, elapsed, rate)
		Expect(stats.failed.Load()).To(BeZero())
		Expect(rate).To(BeNumerically(">=", 100), "the writers should reach about 200 writes/s")

		took := awaitConverged(ctx, cs, ns, time.Minute, lw, cg)
		want := serverState(ctx, cs, ns)
		for _, late := range []*eventCounter{&lwLate, &cgLate} {
			Eventually(late.viewDiff).WithArguments(want).WithTimeout(time.Minute).Should(BeEmpty(), "a late handler's view")
		}
		GinkgoWriter.Printf("late handlers: listwatch %d adds (%d initial) %d updates %d deletes; client-go %d adds (%d initial) %d updates %d deletes\n",
			lwLate.adds.Load(), lwLate.initialAdds.Load(), lwLate.updates.Load(), lwLate.deletes.Load(),
			cgLate.adds.Load(), cgLate.initialAdds.Load(), cgLate.updates.Load(), cgLate.deletes.Load())
		for _, s := range []side{lw, cg} {
			// Each handler's view adds up: what it was told exists is the cache.
			ev := s.events()
			Eventually(func() int64 { return ev.adds.Load() - ev.deletes.Load() }).
				WithTimeout(30*time.Second).Should(BeEquivalentTo(len(s.state())), s.lib())
			record(fmt.Sprintf("churn %v", d), s, took[s],
				fmt.Sprintf("%d writes at %.0f/s; time: last write to converged", stats.writes(), rate))
		}
	})
})
