package samplecontroller

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/retry"

	cgcontroller "github.com/listwatch/listwatch/examples/samplecontroller/clientgo"
	lwcontroller "github.com/listwatch/listwatch/examples/samplecontroller/listwatch"
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
	{"fake clientset", func(context.Context) (kubernetes.Interface, string, func(context.Context)) {
		c, watching := fakeClientset()
		return c, "sample", func(ctx context.Context) {
			GinkgoHelper()
			// The fake's watches start now, not at the list's resource
			// version: a write between an informer's list and its watch
			// would be missed for good (client-go's fake clientset, for
			// either library). Write only once both watches are open.
			for _, r := range []string{"configmaps", "deployments"} {
				Eventually(watching(r)).WithContext(ctx).Should(BeClosed())
			}
		}
	}},
}

// fakeClientset is client-go's fake clientset that, as an apiserver does,
// gives each created object a UID and each write a new resource version,
// refusing an update whose resource version is not the stored one:
// its own tracker sets neither, and the controller, as sample-controller,
// takes an update without a new resource version for a resync (and
// ignores it), while the specs tell a Deployment put back from the
// deleted one by its UID.
//
// watching returns a channel closed once a watch of the resource is open.
func fakeClientset() (c *k8sfake.Clientset, watching func(resource string) <-chan struct{}) {
	c = k8sfake.NewClientset()
	var mu sync.Mutex
	opened := map[string]chan struct{}{}
	chanOf := func(resource string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		ch, ok := opened[resource]
		if !ok {
			ch = make(chan struct{})
			opened[resource] = ch
		}
		return ch
	}
	var once sync.Map
	c.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if w, ok := action.(k8stesting.WatchActionImpl); ok {
			opts = w.ListOptions
		}
		w, err := c.Tracker().Watch(action.GetResource(), action.GetNamespace(), opts)
		if err != nil {
			return true, nil, err
		}
		resource := action.GetResource().Resource
		if _, done := once.LoadOrStore(resource, true); !done {
			close(chanOf(resource))
		}
		return true, w, nil
	})
	var rv atomic.Int64
	c.PrependReactor("*", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		verb := action.GetVerb()
		write, ok := action.(k8stesting.CreateAction) // an UpdateAction too: the same method
		if !ok || (verb != "create" && verb != "update") {
			return false, nil, nil
		}
		m, err := meta.Accessor(write.GetObject())
		if err != nil {
			return false, nil, nil
		}
		if verb == "create" {
			m.SetUID(types.UID(uuid.NewUUID()))
		} else if m.GetResourceVersion() != "" {
			// Optimistic concurrency, as an apiserver: an update from a
			// stale copy (a lister behind the spec's own write) is a
			// conflict, not a lost update.
			stored, err := c.Tracker().Get(action.GetResource(), action.GetNamespace(), m.GetName())
			if err != nil {
				return false, nil, nil // the tracker answers
			}
			if sm, err := meta.Accessor(stored); err == nil && sm.GetResourceVersion() != m.GetResourceVersion() {
				return true, nil, apierrors.NewConflict(action.GetResource().GroupResource(), m.GetName(),
					fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
			}
		}
		m.SetResourceVersion(strconv.FormatInt(rv.Add(1), 10))
		return false, nil, nil // the tracker stores it
	})
	return c, func(resource string) <-chan struct{} { return chanOf(resource) }
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
})

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
