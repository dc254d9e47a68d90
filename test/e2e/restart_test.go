package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/format"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// Specs that kill the apiserver get a server of their own, so the shared one
// stays untouched; its cleanup runs when the Ordered container ends.
var _ = Describe("Apiserver restart", Ordered, func() {
	var (
		own    *testapiserver.Server
		client kubernetes.Interface
	)

	BeforeAll(func(ctx SpecContext) {
		var err error
		own, err = testapiserver.Start(ctx, GinkgoT(), testapiserver.Options{})
		Expect(err).NotTo(HaveOccurred())
		client = kubernetes.NewForConfigOrDie(own.AdminConfig())
	})

	It("ends open watches and keeps the data", func(ctx SpecContext) {
		ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "restart-"},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		created, err := client.CoreV1().ConfigMaps(ns.Name).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "kept"},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		w, err := client.CoreV1().ConfigMaps(ns.Name).Watch(ctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.Stop)

		Expect(own.Restart(ctx)).To(Succeed())
		GinkgoWriter.Printf("kube-apiserver restart to ready: %v\n", own.Timings().APIServerReady)

		// The old stream dies with the old process: the channel drains and closes.
		Eventually(func() bool {
			select {
			case _, open := <-w.ResultChan():
				return !open
			default:
				return false
			}
		}).WithTimeout(30 * time.Second).Should(BeTrue())

		got, err := client.CoreV1().ConfigMaps(ns.Name).Get(ctx, "kept", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(got.ResourceVersion).To(Equal(created.ResourceVersion))

		// A new watch from the same resourceVersion works on the new process,
		// unless etcd moved past it (the new apiserver writes its own leases
		// and endpoints) before the ConfigMap watch cache listed: a fresh
		// watch cache cannot serve a watch from before its initial list and
		// answers one 410 "too old resource version" (see kill_test.go).
		w2, err := client.CoreV1().ConfigMaps(ns.Name).Watch(ctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w2.Stop)
		got.Data = map[string]string{"after": "restart"} // an unchanged object would be a no-op write
		_, err = client.CoreV1().ConfigMaps(ns.Name).Update(ctx, got, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		var ev watch.Event
		Eventually(w2.ResultChan()).WithTimeout(30 * time.Second).Should(Receive(&ev))
		Expect(ev.Type).To(BeElementOf(watch.Modified, watch.Error), "event: %s", format.Object(ev.Object, 1))
		if ev.Type == watch.Error {
			err := apierrors.FromObject(ev.Object)
			Expect(apierrors.IsResourceExpired(err)).To(BeTrue(), "ERROR event: %v", err)
			GinkgoWriter.Printf("watch from rv %s after the restart: %v\n", created.ResourceVersion, err)
		}
	})
})
