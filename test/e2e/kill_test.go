package e2e

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	watchtools "k8s.io/client-go/tools/watch"

	lwwatch "github.com/listwatch/listwatch/clientgo/tools/watch"
	"github.com/listwatch/listwatch/internal/testing/testapiserver"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/retrywatcher"
)

// Specs that SIGKILL kube-apiserver under running informers and watchers,
// on a server of their own.
var _ = Describe("Clients across a kube-apiserver kill -9", Ordered, func() {
	var (
		own *testapiserver.Server
		cs  kubernetes.Interface
	)

	BeforeAll(func(ctx SpecContext) {
		var err error
		own, err = testapiserver.Start(ctx, GinkgoT(), testapiserver.Options{})
		Expect(err).NotTo(HaveOccurred())
		cs = kubernetes.NewForConfigOrDie(own.AdminConfig())
	})

	It("informers recover and converge", func(ctx SpecContext) {
		ns := namespaceOn(ctx, cs, "kill-")
		createConfigMaps(ctx, cs, ns, "cm", 300, 8)
		lw, cg := startBoth(own.AdminConfig(), ns)
		Eventually(func() bool { return lw.synced() && cg.synced() }).WithTimeout(time.Minute).Should(BeTrue())

		// Writers keep going while the apiserver dies and comes back.
		stats := &churnStats{}
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			churn(ctx, cs, ns, 8*time.Second, 100, 4, 100, stats)
		}()
		Eventually(stats.writes).WithTimeout(30 * time.Second).Should(BeNumerically(">=", 150))
		Expect(own.Kill()).To(Succeed())
		killed := time.Now()
		Eventually(func() reflector.Reason { return lw.inf.Status().Reason }).
			WithTimeout(30 * time.Second).Should(Equal(reflector.ReasonConnection))
		Expect(own.Restart(ctx)).To(Succeed())
		down := time.Since(killed)

		// Recovery: how long after the apiserver is ready each cache holds
		// an object written then.
		ready := time.Now()
		marker, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "after-restart"},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		recovered := map[side]time.Duration{}
		Eventually(func() int {
			for _, s := range []side{lw, cg} {
				if _, ok := recovered[s]; !ok && s.state()[ns+"/"+marker.Name] == marker.ResourceVersion {
					recovered[s] = time.Since(ready)
				}
			}
			return len(recovered)
		}).WithTimeout(2 * time.Minute).WithPolling(20 * time.Millisecond).Should(Equal(2))

		Eventually(done).WithTimeout(time.Minute).Should(BeClosed())
		GinkgoWriter.Printf("writes: %s; apiserver down %v\n", stats, down)
		awaitConverged(ctx, cs, ns, 2*time.Minute, lw, cg)
		for _, s := range []side{lw, cg} {
			ev := s.events()
			Eventually(func() int64 { return ev.adds.Load() - ev.deletes.Load() }).
				WithTimeout(30*time.Second).Should(BeEquivalentTo(len(s.state())), s.lib())
			record("kill -9 apiserver", s, recovered[s], fmt.Sprintf(
				"down %v, %d writes (%d failed); time: apiserver ready to a new write cached",
				down.Round(100*time.Millisecond), stats.writes(), stats.failed.Load()))
		}
		GinkgoWriter.Printf("listwatch relists by cause: %v\n", lw.relists.snapshot())
	})

	It("RetryWatchers deliver every event once across a restart", func(ctx SpecContext) {
		ns := namespaceOn(ctx, cs, "rw-")
		list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())

		lwCfg, lwReqs := counted(own.AdminConfig())
		cgCfg, cgReqs := counted(own.AdminConfig())
		relCfg, relReqs := counted(own.AdminConfig())
		lwRW, err := lwwatch.NewRetryWatcherWithContext(ctx, list.ResourceVersion,
			configMapLW(kubernetes.NewForConfigOrDie(lwCfg), ns))
		Expect(err).NotTo(HaveOccurred())
		cgRW, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion,
			configMapLW(kubernetes.NewForConfigOrDie(cgCfg), ns))
		Expect(err).NotTo(HaveOccurred())
		relLW := configMapLW(kubernetes.NewForConfigOrDie(relCfg), ns)
		relRW, err := retrywatcher.New(ctx, retrywatcher.Options{
			ResourceVersion: list.ResourceVersion, Watcher: relLW, Lister: relLW,
		})
		Expect(err).NotTo(HaveOccurred())
		logs := []*eventLog{collect(lwRW.ResultChan(), lwRW.Stop), collect(cgRW.ResultChan(), cgRW.Stop), collect(relRW.ResultChan(), relRW.Stop)}
		reqs := []*requestCounter{lwReqs, cgReqs, relReqs}

		// One writer creates uniquely named objects at about 50/s, through
		// the restart; failed creates are skipped, not retried, so the
		// objects that exist afterwards are exactly the events to expect.
		var created atomic.Int64
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			createThrough(ctx, cs, ns, 300, 20*time.Millisecond, &created)
		}()
		Eventually(created.Load).WithTimeout(30 * time.Second).Should(BeNumerically(">=", 100))
		Expect(own.Restart(ctx)).To(Succeed())
		Eventually(done).WithTimeout(time.Minute).Should(BeClosed())

		// Plain RetryWatchers deliver every create once, in order, unless
		// etcd moved past their resource version before the restarted watch
		// cache listed (see the next spec): then what they delivered is
		// still a gap-free prefix, ended by one 410 ERROR. The relist mode
		// always delivers everything.
		want := serverState(ctx, cs, ns)
		GinkgoWriter.Printf("%d creates acknowledged, %d objects exist\n", created.Load(), len(want))
		for i, lib := range []string{libListwatch, libClientGo, libListwatch + " relist"} {
			Eventually(func() bool { return logs[i].ended() || logs[i].summary() == summary(want) }).
				WithTimeout(time.Minute).Should(BeTrue(), "%s: %s", lib, logs[i].summary())
			gone, err := logs[i].checkPrefix(want)
			Expect(err).NotTo(HaveOccurred(), lib)
			if i == 2 {
				Expect(gone).To(BeFalse(), "relist mode bridges a 410")
			}
			note := "every create seen once, in RV order"
			if gone {
				note = "a gap-free prefix in RV order, then one 410 ERROR"
			}
			recordRow(resultRow{
				Scenario: "RetryWatcher restart", Lib: lib, Objects: len(want), Requests: reqs[i].snapshot(),
				Adds: logs[i].count(watch.Added),
				Note: note + "; " + logs[i].summary(),
			})
		}
		GinkgoWriter.Printf("listwatch RetryWatcher stats: %+v\n", lwRW.Stats())
	})

	It("RetryWatchers get one 410 when the restarted watch cache starts after their resource version", func(ctx SpecContext) {
		ns := namespaceOn(ctx, cs, "rwgone-")
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "before"},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		initial := map[string]string{}
		known := make([]runtime.Object, 0, len(list.Items))
		for i := range list.Items {
			initial[ns+"/"+list.Items[i].Name] = list.Items[i].ResourceVersion
			known = append(known, &list.Items[i])
		}

		lwRW, err := lwwatch.NewRetryWatcherWithContext(ctx, list.ResourceVersion, configMapLW(cs, ns))
		Expect(err).NotTo(HaveOccurred())
		cgRW, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, configMapLW(cs, ns))
		Expect(err).NotTo(HaveOccurred())
		relRW, err := retrywatcher.New(ctx, retrywatcher.Options{
			ResourceVersion: list.ResourceVersion, Watcher: configMapLW(cs, ns), Lister: configMapLW(cs, ns), Known: known,
		})
		Expect(err).NotTo(HaveOccurred())
		logs := []*eventLog{collect(lwRW.ResultChan(), lwRW.Stop), collect(cgRW.ResultChan(), cgRW.Stop), collect(relRW.ResultChan(), relRW.Stop)}

		// A write to another resource moves etcd past the watchers' RV
		// without any ConfigMap event, so the restarted ConfigMap watch
		// cache starts after it and cannot serve a watch from it.
		_, err = cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(own.Restart(ctx)).To(Succeed())
		_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "after"},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		want := serverState(ctx, cs, ns)

		// A watcher's Done closes after its last event was handed over,
		// not after the collector logged it: wait for the log.
		for i, done := range []<-chan struct{}{lwRW.Done(), cgRW.Done()} {
			Eventually(done).WithTimeout(time.Minute).Should(BeClosed())
			Eventually(logs[i].drained).WithTimeout(time.Minute).Should(BeClosed())
			Expect(logs[i].summary()).To(MatchRegexp(`^0 ADDED, 0 MODIFIED, 0 DELETED, 1 ERROR: too old resource version`))
		}
		Expect(apierrors.IsResourceExpired(lwRW.Err()) || apierrors.IsGone(lwRW.Err())).To(BeTrue(), "Err: %v", lwRW.Err())
		Eventually(func() string { s, _ := logs[2].replay(initial); return stateDiff(want, s) }).
			WithTimeout(time.Minute).Should(BeEmpty())
		Expect(logs[2].summary()).To(Equal("1 ADDED, 0 MODIFIED, 0 DELETED, 0 ERROR"))
		for i, lib := range []string{libListwatch, libClientGo, libListwatch + " relist"} {
			st, _ := logs[i].replay(initial)
			recordRow(resultRow{
				Scenario: "RetryWatcher restart 410", Lib: lib, Objects: len(st), Adds: logs[i].count(watch.Added),
				Note: "events: " + logs[i].summary(),
			})
		}
	})
})

// namespaceOn creates a namespace with a generated name on the server cs
// talks to and deletes it when the spec ends.
func namespaceOn(ctx context.Context, cs kubernetes.Interface, prefix string) string {
	GinkgoHelper()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		Expect(cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})).To(Succeed())
	})
	return ns.Name
}

// createThrough creates rw-0000 ... rw-<n-1> in ns, one per interval, and
// counts the creates the server acknowledged. A failed create is not retried.
func createThrough(ctx context.Context, cs kubernetes.Interface, ns string, n int, interval time.Duration, created *atomic.Int64) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := range n {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("rw-%04d", i)},
		}, metav1.CreateOptions{})
		if err == nil {
			created.Add(1)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
