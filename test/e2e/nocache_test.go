package e2e

import (
	"fmt"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/listwatch/listwatch/internal/testapiserver"
	"github.com/listwatch/listwatch/reflector"
)

// Specs on a server with the watch cache off and etcd compacted every
// second, so that lists and watches go straight to etcd and a watch from a
// compacted resource version gets its 410 from etcd.
var _ = Describe("Informers without the watch cache", Ordered, func() {
	var (
		own *testapiserver.Server
		cs  kubernetes.Interface
	)

	BeforeAll(func(ctx SpecContext) {
		var err error
		own, err = testapiserver.Start(ctx, GinkgoT(), testapiserver.Options{
			DisableWatchCache:      true,
			EtcdCompactionInterval: time.Second,
		})
		Expect(err).NotTo(HaveOccurred())
		cs = kubernetes.NewForConfigOrDie(own.AdminConfig())
	})

	It("sync, follow writes and equal a quorum list", func(ctx SpecContext) {
		ns := namespaceOn(ctx, cs, "nocache-")
		createConfigMaps(ctx, cs, ns, "cm", 1000, 8)
		t0 := time.Now()
		lw, cg := startBoth(own.AdminConfig(), ns)
		synced := map[side]time.Duration{}
		Eventually(func() int {
			for _, s := range []side{lw, cg} {
				if _, ok := synced[s]; !ok && s.synced() {
					synced[s] = time.Since(t0)
				}
			}
			return len(synced)
		}).WithTimeout(time.Minute).Should(Equal(2))

		stats := &churnStats{}
		churn(ctx, cs, ns, 10*time.Second, 100, 4, 100, stats)
		Expect(stats.failed.Load()).To(BeZero())
		took := awaitConverged(ctx, cs, ns, time.Minute, lw, cg)
		for _, s := range []side{lw, cg} {
			record("watch cache off", s, synced[s], fmt.Sprintf(
				"time: to HasSynced (1000 objects); then %d writes, converged %v after the last",
				stats.writes(), took[s].Round(time.Millisecond)))
		}
	})

	It("relist after a 410 when etcd compacted past the informer's resource version", func(ctx SpecContext) {
		ns := namespaceOn(ctx, cs, "compact-")
		createConfigMaps(ctx, cs, ns, "cm", 200, 8)
		lw, cg := startBoth(own.AdminConfig(), ns)
		Eventually(func() bool { return lw.synced() && cg.synced() }).WithTimeout(time.Minute).Should(BeTrue())

		// Cut both informers off, write, and wait until etcd has compacted
		// the revision after the older of their resource versions, so a
		// watch resumed from there must fail with 410.
		lw.requests().partition()
		cg.requests().partition()
		stats := &churnStats{}
		churn(ctx, cs, ns, 2*time.Second, 100, 4, 50, stats)
		rv := min(mustParseRV(lw.inf.LastSyncResourceVersion()), mustParseRV(cg.inf.LastSyncResourceVersion()))
		Eventually(func() error {
			_, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{
				ResourceVersion:      strconv.FormatUint(rv+1, 10),
				ResourceVersionMatch: metav1.ResourceVersionMatchExact,
				Limit:                1,
			})
			return err
		}).WithTimeout(30*time.Second).WithPolling(200*time.Millisecond).Should(Satisfy(apierrors.IsResourceExpired),
			"etcd should compact past rv %d", rv+1)

		lw.requests().heal()
		cg.requests().heal()
		took := awaitConverged(ctx, cs, ns, 2*time.Minute, lw, cg)
		Expect(lw.relists.count(reflector.ReasonExpired)).To(BeNumerically(">=", 1),
			"listwatch relists by cause: %v", lw.relists.snapshot())
		Expect(cg.requests().listCycles.Load()).To(BeNumerically(">=", 2), "client-go lists again")
		for _, s := range []side{lw, cg} {
			record("compaction 410", s, took[s], fmt.Sprintf(
				"%d writes while cut off; time: reconnect to converged", stats.writes()))
		}
	})
})

// mustParseRV parses a numeric resource version.
func mustParseRV(rv string) uint64 {
	GinkgoHelper()
	n, err := strconv.ParseUint(rv, 10, 64)
	Expect(err).NotTo(HaveOccurred(), "resource version %q", rv)
	return n
}
