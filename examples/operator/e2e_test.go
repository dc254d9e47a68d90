package operator

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// server is the apiserver every spec shares; set by BeforeSuite.
var server *testapiserver.Server

func TestE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: needs a real kube-apiserver; skipped under -short")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "controller-runtime operator e2e")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	// controller-runtime's sources log through its global logger.
	ctrllog.SetLogger(GinkgoLogr)
	var err error
	server, err = testapiserver.Start(ctx, GinkgoT(), testapiserver.Options{})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if server != nil {
		server.Stop()
	}
})

func adminClient() kubernetes.Interface { return kubernetes.NewForConfigOrDie(server.AdminConfig()) }

// newNamespace creates a namespace for the calling container; it is
// deleted when the container ends (and stays Terminating: no namespace
// controller runs).
func newNamespace(ctx context.Context) string {
	GinkgoHelper()
	c := adminClient()
	ns, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cr-"}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		Expect(c.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})).To(Succeed())
	})
	return ns.Name
}

// startFor starts the operator for the calling container and stops it
// (requiring a clean exit) when the container ends.
func startFor(impl Informers, ns string, strip bool) *running {
	GinkgoHelper()
	return startWith(Options{Config: server.AdminConfig(), Namespace: ns, Informers: impl, StripManagedFields: strip, MaxConcurrentReconciles: 2})
}

func startWith(opts Options) *running {
	GinkgoHelper()
	op, err := startOperator(opts, GinkgoLogr)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		select {
		case err := <-op.done: // already stopped by a spec
			op.done <- err
		default:
			Expect(op.stopAndWait()).To(Succeed())
		}
	})
	return op
}

func createSecrets(ctx context.Context, c kubernetes.Interface, ns string, from, to int) {
	GinkgoHelper()
	for i := from; i < to; i++ {
		_, err := c.CoreV1().Secrets(ns).Create(ctx, newSecret(ns, fmt.Sprintf("s-%d", i), "v0"), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
	}
}

func expectConverged(ctx context.Context, c kubernetes.Interface, ns string) {
	GinkgoHelper()
	Eventually(converged).WithContext(ctx).WithArguments(c, ns).WithTimeout(60 * time.Second).Should(Succeed())
}

func names[T metav1.Object](items []T) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.GetName()
	}
	slices.Sort(out)
	return out
}

// specState is what an implementation's ordered container shares: set by
// its BeforeAll, read by its specs.
type specState struct {
	c  kubernetes.Interface
	ns string // the namespace the operator runs in
	op *running
}

var _ = Describe("the digest operator", func() {
	for _, impl := range impls {
		Describe("with "+string(impl)+" informers", Ordered, func() {
			st := &specState{}
			BeforeAll(func(ctx SpecContext) {
				st.c = adminClient()
				st.ns = newNamespace(ctx)
				st.op = startFor(impl, st.ns, false)
			})
			lifecycleSpecs(impl, st)
			readSpecs(impl, st)
			handlerSpecs(impl, st)
			clientSpecs(impl, st)

			It("stops every informer when the manager stops", func(ctx SpecContext) {
				var infs []interface{ IsStopped() bool }
				for _, obj := range []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}} {
					inf, err := st.op.mgr.GetCache().GetInformer(ctx, obj)
					Expect(err).NotTo(HaveOccurred())
					Expect(inf.IsStopped()).To(BeFalse())
					infs = append(infs, inf)
				}
				Expect(st.op.stopAndWait()).To(Succeed())
				st.op.done <- nil // for startFor's cleanup
				for _, inf := range infs {
					Eventually(inf.IsStopped).WithContext(ctx).Should(BeTrue())
				}
			})
		})
	}
})

// lifecycleSpecs registers the specs of creation, updates, deletions, owned-object restores and a restart.
func lifecycleSpecs(impl Informers, st *specState) {
	It("builds its informers with the chosen implementation", func(ctx SpecContext) {
		Expect(st.op.informerTypes()).To(Equal(map[string]string{
			"*v1.Secret":    wantInformerType(impl),
			"*v1.ConfigMap": wantInformerType(impl),
		}))
	})

	It("reconciles created, updated and deleted Secrets", func(ctx SpecContext) {
		createSecrets(ctx, st.c, st.ns, 0, 20)
		expectConverged(ctx, st.c, st.ns)
		for i := range 5 {
			setSecret(ctx, st.c, st.ns, fmt.Sprintf("s-%d", i), "v1")
		}
		expectConverged(ctx, st.c, st.ns)
		for i := 7; i < 10; i++ {
			Expect(st.c.CoreV1().Secrets(st.ns).Delete(ctx, fmt.Sprintf("s-%d", i), metav1.DeleteOptions{})).To(Succeed())
		}
		expectConverged(ctx, st.c, st.ns)
		// The counter moves just after the apiserver's delete returns.
		Eventually(st.op.counters.Deleted.Load).WithContext(ctx).Should(BeEquivalentTo(3))
	})

	It("restores a digest that was deleted or edited (watch on the owned type)", func(ctx SpecContext) {
		Expect(st.c.CoreV1().ConfigMaps(st.ns).Delete(ctx, DigestName("s-5"), metav1.DeleteOptions{})).To(Succeed())
		cm, err := st.c.CoreV1().ConfigMaps(st.ns).Get(ctx, DigestName("s-6"), metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		cm.Data["value"] = "tampered"
		_, err = st.c.CoreV1().ConfigMaps(st.ns).Update(ctx, cm, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		expectConverged(ctx, st.c, st.ns)
	})

	It("survives an apiserver restart in the middle of changes", func(ctx SpecContext) {
		createSecrets(ctx, st.c, st.ns, 20, 25)
		setSecret(ctx, st.c, st.ns, "s-10", "v2")
		Expect(server.Restart(ctx)).To(Succeed())
		createSecrets(ctx, st.c, st.ns, 25, 28)
		setSecret(ctx, st.c, st.ns, "s-11", "v2")
		Expect(st.c.CoreV1().Secrets(st.ns).Delete(ctx, "s-12", metav1.DeleteOptions{})).To(Succeed())
		expectConverged(ctx, st.c, st.ns)
		GinkgoWriter.Printf("%s: watch error handler calls across the restart: %d\n", impl, st.op.watchErrors.Load())
	})
}

// readSpecs registers the specs of reads from the cache: field indexes, metadata-only, unstructured, managedFields.
func readSpecs(impl Informers, st *specState) {
	It("answers List with MatchingFields from the field index", func(ctx SpecContext) {
		// The apiserver has converged; the cache may still be a few
		// events behind it, hence Eventually.
		owned := func(owner string, opts ...client.ListOption) func() ([]string, error) {
			return func() ([]string, error) {
				var cms corev1.ConfigMapList
				err := st.op.mgr.GetClient().List(ctx, &cms, append(opts, client.MatchingFields{OwnerField: owner})...)
				return names(ptrs(cms.Items)), err
			}
		}
		Eventually(owned("s-13", client.InNamespace(st.ns))).WithContext(ctx).Should(Equal([]string{"s-13-digest"}))
		Eventually(owned("s-14")).WithContext(ctx).Should(Equal([]string{"s-14-digest"}))
		Eventually(owned("s-12", client.InNamespace(st.ns))).WithContext(ctx).Should(BeEmpty())
	})

	It("serves metadata-only and unstructured objects from the cache", func(ctx SpecContext) {
		want, err := st.c.CoreV1().Secrets(st.ns).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		meta := &metav1.PartialObjectMetadataList{}
		meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		Eventually(func() ([]string, error) {
			err := st.op.mgr.GetCache().List(ctx, meta, client.InNamespace(st.ns))
			return names(ptrs(meta.Items)), err
		}).WithContext(ctx).Should(Equal(names(ptrs(want.Items))))

		u := &unstructured.UnstructuredList{}
		u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
		// The first List starts and syncs the unstructured informer;
		// IndexField then adds an indexer to a running, synced one.
		Expect(st.op.mgr.GetCache().List(ctx, u, client.InNamespace(st.ns))).To(Succeed())
		Expect(u.Items).NotTo(BeEmpty())
		uCM := &unstructured.Unstructured{}
		uCM.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		Expect(st.op.mgr.GetCache().IndexField(ctx, uCM, OwnerField, ownerIndex)).To(Succeed())
		Expect(st.op.mgr.GetCache().List(ctx, u, client.InNamespace(st.ns), client.MatchingFields{OwnerField: "s-15"})).To(Succeed())
		Expect(u.Items).To(HaveLen(1))
		data, _, _ := unstructured.NestedStringMap(u.Items[0].Object, "data")
		Expect(data).To(Equal(Digest(secretNamed(want.Items, "s-15"))))

		types := st.op.informerTypes()
		Expect(types).To(HaveKeyWithValue("*v1.PartialObjectMetadata", wantInformerType(impl)))
		Expect(types).To(HaveKeyWithValue("*unstructured.Unstructured", wantInformerType(impl)))
	})

	It("keeps managedFields in the cache when no transform is set", func(ctx SpecContext) {
		var s corev1.Secret
		Expect(st.op.mgr.GetClient().Get(ctx, client.ObjectKey{Namespace: st.ns, Name: "s-0"}, &s)).To(Succeed())
		Expect(s.ManagedFields).NotTo(BeEmpty())
	})
}

// handlerSpecs registers the specs of event handlers on a running informer and TransformStripManagedFields.
func handlerSpecs(impl Informers, st *specState) {
	It("adds and removes event handlers on a running informer", func(ctx SpecContext) {
		inf, err := st.op.mgr.GetCache().GetInformer(ctx, &corev1.Secret{})
		Expect(err).NotTo(HaveOccurred())
		// The cache wraps its informers (one per namespace); GetStore is
		// on the SharedIndexInformer it built.
		store := st.op.builtInformer("*v1.Secret").GetStore()
		removed := &events{}
		reg, err := inf.AddEventHandler(removed)
		Expect(err).NotTo(HaveOccurred())
		Eventually(reg.HasSyncedChecker().Done()).WithContext(ctx).Should(BeClosed())
		Expect(removed.take()).To(HaveLen(len(store.ListKeys())))
		Expect(inf.RemoveEventHandler(reg)).To(Succeed())

		kept := &events{}
		reg2, err := inf.AddEventHandler(kept)
		Expect(err).NotTo(HaveOccurred())
		Eventually(reg2.HasSynced).WithContext(ctx).Should(BeTrue())
		kept.take()
		createSecrets(ctx, st.c, st.ns, 40, 41)
		Eventually(kept.take).WithContext(ctx).Should(ContainElement(HavePrefix("add s-40(")))
		Expect(removed.take()).To(BeEmpty())
		Expect(inf.RemoveEventHandler(reg2)).To(Succeed())
		expectConverged(ctx, st.c, st.ns)
	})

	It("strips managedFields with TransformStripManagedFields", func(ctx SpecContext) {
		ns2 := newNamespace(ctx)
		createSecrets(ctx, st.c, ns2, 0, 3)
		op2 := startFor(impl, ns2, true)
		expectConverged(ctx, st.c, ns2)
		var s corev1.Secret
		Expect(op2.mgr.GetClient().Get(ctx, client.ObjectKey{Namespace: ns2, Name: "s-1"}, &s)).To(Succeed())
		Expect(s.ManagedFields).To(BeEmpty())
		direct, err := st.c.CoreV1().Secrets(ns2).Get(ctx, "s-1", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(direct.ManagedFields).NotTo(BeEmpty())
	})
}

// clientSpecs registers the specs of read-your-writes and the watch error handler.
func clientSpecs(impl Informers, st *specState) {
	It("reads its own writes with EnableReadYourWritesConsistency", func(ctx SpecContext) {
		ns3 := newNamespace(ctx)
		op3 := startWith(Options{Config: server.AdminConfig(), Namespace: ns3, Informers: impl, ReadYourWrites: true})
		cl := op3.mgr.GetClient()
		for i := range 20 {
			s := newSecret(ns3, fmt.Sprintf("ryw-%d", i), "v0")
			Expect(cl.Create(ctx, s)).To(Succeed())
			// No Eventually: the cached read waits for the write.
			var got corev1.Secret
			Expect(cl.Get(ctx, client.ObjectKeyFromObject(s), &got)).To(Succeed())
			Expect(got.ResourceVersion).To(Equal(s.ResourceVersion))
			got.Data["value"] = []byte("v1")
			Expect(cl.Update(ctx, &got)).To(Succeed())
			var again corev1.Secret
			Expect(cl.Get(ctx, client.ObjectKeyFromObject(s), &again)).To(Succeed())
			Expect(string(again.Data["value"])).To(Equal("v1"))
		}
		expectConverged(ctx, st.c, ns3)
	})

	It("reports a forbidden list to the watch error handler", func(ctx SpecContext) {
		// A bare cache of the operator's (Informers.NewCache), for a
		// user without RBAC: a manager would not do, as its Start
		// (v0.25.2) never returns when stopped before its caches sync.
		newCache, err := impl.NewCache(true, nil)
		Expect(err).NotTo(HaveOccurred())
		var calls atomic.Int64
		var last atomic.Pointer[error]
		cch, err := newCache(server.UnprivilegedConfig(), cache.Options{
			// All namespaces: a namespaced cache's wrapper keeps a
			// goroutine waiting for a sync that never comes.
			DefaultWatchErrorHandler: func(_ context.Context, _ *toolscache.Reflector, err error) {
				last.Store(&err)
				calls.Add(1)
			},
		})
		Expect(err).NotTo(HaveOccurred())
		cctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- cch.Start(cctx) }()
		DeferCleanup(func() { cancel(); Expect(<-done).To(Succeed()) })
		_, err = cch.GetInformer(ctx, &corev1.Secret{}, cache.BlockUntilSynced(false))
		Expect(err).NotTo(HaveOccurred())
		Eventually(calls.Load).WithContext(ctx).Should(BeNumerically(">", 0))
		Expect(apierrors.IsForbidden(*last.Load())).To(BeTrue(), "%v", *last.Load())
	})
}

func ptrs[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

func secretNamed(items []corev1.Secret, name string) *corev1.Secret {
	for i := range items {
		if items[i].Name == name {
			return &items[i]
		}
	}
	Fail("no secret " + name)
	return nil
}
