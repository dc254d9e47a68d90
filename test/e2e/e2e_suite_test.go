package e2e

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// server is the apiserver shared by every spec; set by BeforeSuite and
// stopped by AfterSuite (Start's own cleanup would also stop it, later).
var server *testapiserver.Server

func TestE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: needs a real kube-apiserver; skipped under -short")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "listwatch e2e")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	server, err = testapiserver.Start(ctx, GinkgoT(), testapiserver.Options{})
	Expect(err).NotTo(HaveOccurred())
	timings := server.Timings()
	GinkgoWriter.Printf("apiserver %s ready: etcd %v, kube-apiserver %v\n", server.URL(), timings.EtcdReady, timings.APIServerReady)
})

var _ = AfterSuite(func() {
	if server != nil {
		server.Stop()
	}
	if table := resultsTable(); table != "" {
		GinkgoWriter.Print(table)
		AddReportEntry("listwatch vs client-go", table, ReportEntryVisibilityAlways)
	}
})

// adminClient returns a clientset for the system:masters admin.
func adminClient() kubernetes.Interface {
	return kubernetes.NewForConfigOrDie(server.AdminConfig())
}

// unprivilegedClient returns a clientset for the user with no RBAC bindings.
func unprivilegedClient() kubernetes.Interface {
	return kubernetes.NewForConfigOrDie(server.UnprivilegedConfig())
}

// newNamespace creates a namespace with a generated name for the current
// spec and deletes it when the spec ends (no namespace controller runs, so
// it stays Terminating, which is harmless).
func newNamespace(ctx SpecContext) string {
	GinkgoHelper()
	client := adminClient()
	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})).To(Succeed())
	})
	return ns.Name
}
