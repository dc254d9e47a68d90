package samplecontroller

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	cgcontroller "github.com/listwatch/listwatch/examples/samplecontroller/clientgo"
	lwcontroller "github.com/listwatch/listwatch/examples/samplecontroller/listwatch"
	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// server is the real apiserver the "apiserver" specs share; nil under
// -short.
var server *testapiserver.Server

func TestSampleController(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "sample controller, client-go and listwatch")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	if testing.Short() {
		return
	}
	var err error
	server, err = testapiserver.Start(ctx, GinkgoT(), testapiserver.Options{})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if server != nil {
		server.Stop()
	}
})

// controller is what both copies of the controller have.
type controller interface {
	Run(ctx context.Context, workers int) error
	Factory() informers.SharedInformerFactory
}

var variants = []struct {
	name string
	new  func(context.Context, kubernetes.Interface, string) (controller, error)
	// informerPkg is the package of the informers the factory hands out.
	informerPkg string
}{
	{"client-go imports", func(ctx context.Context, c kubernetes.Interface, ns string) (controller, error) {
		return cgcontroller.New(ctx, c, ns)
	}, "k8s.io/client-go/tools/cache"},
	{"listwatch imports", func(ctx context.Context, c kubernetes.Interface, ns string) (controller, error) {
		return lwcontroller.New(ctx, c, ns)
	}, "github.com/listwatch/listwatch/clientgo/tools/cache"},
}

// backends give each spec a client, an empty namespace, and a wait for
// the controller's watches to be open once it runs.
var backends = []struct {
	name  string
	setup func(ctx context.Context) (kubernetes.Interface, string, func(context.Context))
}{
	{"real apiserver", func(ctx context.Context) (kubernetes.Interface, string, func(context.Context)) {
		if server == nil {
			Skip("needs a real kube-apiserver; skipped under -short")
		}
		c := kubernetes.NewForConfigOrDie(server.AdminConfig())
		ns, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "sample-"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			Expect(c.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})).To(Succeed())
		})
		// A real watch starts at the list's resource version: nothing
		// written meanwhile is missed.
		return c, ns.Name, func(context.Context) {}
	}},
	{"fake apiserver", func(ctx context.Context) (kubernetes.Interface, string, func(context.Context)) {
		_, c := fakeAPIServer(ctx)
		// The in-memory apiserver's watches start at the list's resource
		// version, as a real one's: nothing written meanwhile is missed.
		return c, "sample", func(context.Context) {}
	}},
}

// deployments is apps/v1 Deployments for the fake apiserver (its status
// subresource served, as for every typed resource with a Status).
var deploymentsResource = fake.Resource{GVR: appsv1.SchemeGroupVersion.WithResource("deployments"), Kind: "Deployment", Namespaced: true}

// fakeAPIServer is listwatch's in-memory apiserver with ConfigMaps and
// Deployments, served over the REST API (fake/fakeapi) until the spec
// ends, and a clientset on it: UIDs, resource versions, conflicts, the
// status subresource and watches from a resource version as
// kube-apiserver gives them, with no reactors to write.
func fakeAPIServer(ctx context.Context) (*fake.Server, kubernetes.Interface) {
	GinkgoHelper()
	srv, err := fake.NewServer(fake.Options{Resources: []fake.Resource{fake.ConfigMaps(), deploymentsResource}})
	Expect(err).NotTo(HaveOccurred())
	serveCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	cfg, err := fakeapi.Serve(serveCtx, srv, fakeapi.Options{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(stop)
	cfg.QPS = -1
	return srv, kubernetes.NewForConfigOrDie(cfg)
}

var _ = Describe("the sample controller", func() {
	for _, b := range backends {
		for _, v := range variants {
			It("keeps each app's Deployment, with "+v.name+", on a "+b.name, func(ctx SpecContext) {
				c, ns, watching := b.setup(ctx)
				start(ctx, v.new, c, ns, v.informerPkg)
				watching(ctx)
				appSpecs(ctx, c, ns)
			})
		}
	}
	for _, v := range variants {
		It("converges through faults a fake clientset cannot express, with "+v.name, func(ctx SpecContext) {
			srv, c := fakeAPIServer(ctx)
			start(ctx, v.new, c, "sample", v.informerPkg)
			faultSpecs(ctx, srv, c, "sample")
		})
	}
})

// faultSpecs makes the server refuse the controller's first creates, then
// compacts its history and closes every watch so that the informers'
// next watch is 410 Expired and they relist, and checks that the app
// still gets its Deployment and follows an edit.
func faultSpecs(ctx context.Context, srv *fake.Server, c kubernetes.Interface, ns string) {
	GinkgoHelper()
	const timeout = 30 * time.Second
	cms, deployments := c.CoreV1().ConfigMaps(ns), c.AppsV1().Deployments(ns)

	By("refusing the Deployment's first three creates with 500")
	Expect(srv.FailNext(fake.Failure{Resource: deploymentsResource.GVR, Verbs: fake.VerbCreate, Times: 3, Kind: fake.InternalError})).To(Succeed())
	_, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Labels: map[string]string{cgcontroller.AppLabel: "true"}},
		Data:       map[string]string{cgcontroller.KeyDeployment: "web", cgcontroller.KeyReplicas: "2", cgcontroller.KeyImage: "nginx:1"},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	deployment := func() (*appsv1.Deployment, error) { return deployments.Get(ctx, "web", metav1.GetOptions{}) }
	Eventually(deployment).WithTimeout(timeout).Should(HaveField("Spec.Replicas", HaveValue(BeEquivalentTo(2))))

	By("compacting the history and closing every watch: the informers relist")
	Expect(srv.Compact(srv.ResourceVersion())).To(Succeed())
	srv.CloseWatches(schema.GroupVersionResource{})
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(ctx, "app", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data[cgcontroller.KeyReplicas] = "4"
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})).To(Succeed())
	Eventually(deployment).WithTimeout(timeout).Should(HaveField("Spec.Replicas", HaveValue(BeEquivalentTo(4))))
}

// start runs the controller until the spec ends, and checks whose
// informers its factory hands out.
func start(ctx context.Context, newController func(context.Context, kubernetes.Interface, string) (controller, error), c kubernetes.Interface, ns, informerPkg string) {
	GinkgoHelper()
	ctrl, err := newController(ctx, c, ns)
	Expect(err).NotTo(HaveOccurred())
	inf := ctrl.Factory().InformerFor(&corev1.ConfigMap{}, nil) // the one the typed accessor wraps
	Expect(reflect.TypeOf(inf).Elem().PkgPath()).To(Equal(informerPkg))

	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(runCtx, 2) }()
	DeferCleanup(func() {
		cancel()
		Eventually(done).WithTimeout(30 * time.Second).Should(Receive(BeNil()))
	})
}

// appSpecs drives one app through its life and checks the controller's
// answers.
func appSpecs(ctx context.Context, c kubernetes.Interface, ns string) {
	GinkgoHelper()
	const timeout = 30 * time.Second
	cms, deployments := c.CoreV1().ConfigMaps(ns), c.AppsV1().Deployments(ns)

	By("creating an app's ConfigMap, which gets its Deployment")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Labels: map[string]string{cgcontroller.AppLabel: "true"}},
		Data:       map[string]string{cgcontroller.KeyDeployment: "web", cgcontroller.KeyReplicas: "2", cgcontroller.KeyImage: "nginx:1"},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	// A ConfigMap without the label is left alone.
	_, err = cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "other"},
		Data:       map[string]string{cgcontroller.KeyDeployment: "other", cgcontroller.KeyReplicas: "1"},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	deployment := func() (*appsv1.Deployment, error) { return deployments.Get(ctx, "web", metav1.GetOptions{}) }
	Eventually(deployment).WithTimeout(timeout).Should(SatisfyAll(
		HaveField("Spec.Replicas", HaveValue(BeEquivalentTo(2))),
		HaveField("OwnerReferences", ConsistOf(HaveField("UID", cm.UID))),
	))

	By("editing the ConfigMap, which the Deployment follows")
	// The controller writes the ConfigMap too (its annotation): retry on
	// a conflict, as any client does.
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(ctx, "app", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data[cgcontroller.KeyReplicas], cm.Data[cgcontroller.KeyImage] = "3", "nginx:2"
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})).To(Succeed())
	Eventually(deployment).WithTimeout(timeout).Should(SatisfyAll(
		HaveField("Spec.Replicas", HaveValue(BeEquivalentTo(3))),
		HaveField("Spec.Template.Spec.Containers", ConsistOf(HaveField("Image", "nginx:2"))),
	))

	By("the Deployment's status reaching the ConfigMap")
	// Reported as a deployment controller would (an apiserver refuses more
	// available than ready replicas), and again whenever it is gone: the
	// fake clientset's Update of a Deployment replaces its status too
	// (an apiserver keeps it), so a late write of the spec by the
	// controller, from a lister not yet at its own last write, wipes it.
	Eventually(func(g Gomega) {
		d, err := deployment()
		g.Expect(err).NotTo(HaveOccurred())
		if d.Status.AvailableReplicas != 3 {
			d.Status.Replicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas = 3, 3, 3
			_, err = deployments.UpdateStatus(ctx, d, metav1.UpdateOptions{})
			g.Expect(err).NotTo(HaveOccurred())
		}
		cm, err := cms.Get(ctx, "app", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cm.Annotations).To(HaveKeyWithValue(cgcontroller.AvailableAnnotation, "3"))
	}).WithTimeout(timeout).Should(Succeed())
	d, err := deployment()
	Expect(err).NotTo(HaveOccurred())

	By("deleting the Deployment, which is put back")
	Expect(deployments.Delete(ctx, "web", metav1.DeleteOptions{})).To(Succeed())
	Eventually(func() (types.UID, error) {
		d, err := deployment()
		if err != nil {
			return "", err
		}
		return d.UID, nil
	}).WithTimeout(timeout).ShouldNot(Or(BeEmpty(), Equal(d.UID)))

	list, err := deployments.List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, d := range list.Items {
		names = append(names, d.Name)
	}
	Expect(strings.Join(names, ",")).To(Equal("web"), "only the labelled app has a Deployment")
}
