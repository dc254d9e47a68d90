package conformance

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// holdFinalizer keeps a deleted object in the specs' namespaces; no
// controller removes it.
const holdFinalizer = "conformance.listwatch.io/hold"

// finalizerSpecs: deletes of objects with finalizers, the garbage
// collector's finalizers from a propagation policy, and the updates that
// finish a deletion. No controller runs on either server.
func finalizerSpecs(v variant, e *env) {
	Describe("finalizers", func() {
		var held *corev1.ConfigMap

		BeforeEach(func(ctx SpecContext) {
			var err error
			held, err = e.c.CreateConfigMap(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Namespace: e.ns, Name: "held", Finalizers: []string{holdFinalizer}}})
			Expect(err).NotTo(HaveOccurred())
		})

		// markedBy deletes held and returns it as the server keeps it.
		markedBy := func(ctx SpecContext, opts metav1.DeleteOptions) *corev1.ConfigMap {
			GinkgoHelper()
			out, err := e.c.DeleteConfigMapWith(ctx, e.ns, "held", opts)
			Expect(err).NotTo(HaveOccurred())
			Expect(out).NotTo(BeNil(), "the server kept the object")
			return out
		}

		v.it("a delete marks the object with deletionTimestamp and a zero grace period, a MODIFIED event, and keeps it", func(ctx SpecContext) {
			w := e.watch(ctx, metav1.ListOptions{ResourceVersion: held.ResourceVersion})
			marked := markedBy(ctx, metav1.DeleteOptions{})
			Expect(rv(marked.ResourceVersion)).To(BeNumerically(">", rv(held.ResourceVersion)))
			Expect(marked.DeletionTimestamp).NotTo(BeNil())
			Expect(marked.DeletionGracePeriodSeconds).To(HaveValue(BeEquivalentTo(0)))
			Expect(marked.Finalizers).To(Equal([]string{holdFinalizer}))
			Expect(nextDescribed(w, 1)).To(Equal([]string{"MODIFIED " + at(marked)}))
			Expect(e.get(ctx, "held").ResourceVersion).To(Equal(marked.ResourceVersion))
		})

		v.it("a second delete writes nothing and answers the object as stored", func(ctx SpecContext) {
			marked := markedBy(ctx, metav1.DeleteOptions{})
			w := e.watch(ctx, metav1.ListOptions{ResourceVersion: marked.ResourceVersion})
			again := markedBy(ctx, metav1.DeleteOptions{})
			Expect(again.ResourceVersion).To(Equal(marked.ResourceVersion))
			Expect(again.DeletionTimestamp).To(Equal(marked.DeletionTimestamp))
			sentinel := e.create(ctx, "zz", nil)
			Expect(nextDescribed(w, 1)).To(Equal([]string{"ADDED " + at(sentinel)}))
		})

		v.it("an update may not add a finalizer to an object being deleted: 422 Forbidden on metadata.finalizers", func(ctx SpecContext) {
			marked := markedBy(ctx, metav1.DeleteOptions{})
			more := marked.DeepCopy()
			more.Finalizers = append(more.Finalizers, "conformance.listwatch.io/more")
			_, err := e.c.UpdateConfigMap(ctx, more)
			st := status(err)
			Expect(st.Code).To(BeEquivalentTo(422))
			Expect(st.Reason).To(Equal(metav1.StatusReasonInvalid))
			Expect(st.Message).To(Equal(`ConfigMap "held" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"conformance.listwatch.io/more"}`))
			Expect(e.get(ctx, "held").ResourceVersion).To(Equal(marked.ResourceVersion))
		})

		v.it("an update keeps deletionTimestamp when the body drops it", func(ctx SpecContext) {
			marked := markedBy(ctx, metav1.DeleteOptions{})
			cp := marked.DeepCopy()
			cp.DeletionTimestamp, cp.DeletionGracePeriodSeconds = nil, nil
			cp.Data = map[string]string{"k": "v"}
			out, err := e.c.UpdateConfigMap(ctx, cp)
			Expect(err).NotTo(HaveOccurred())
			Expect(out.DeletionTimestamp).To(Equal(marked.DeletionTimestamp))
			Expect(out.DeletionGracePeriodSeconds).To(HaveValue(BeEquivalentTo(0)))
		})

		v.it("the update that removes the last finalizer deletes the object: DELETED with its last stored state", func(ctx SpecContext) {
			marked := markedBy(ctx, metav1.DeleteOptions{})
			w := e.watch(ctx, metav1.ListOptions{ResourceVersion: marked.ResourceVersion})
			cp := marked.DeepCopy()
			cp.Finalizers = nil
			out, err := e.c.UpdateConfigMap(ctx, cp)
			Expect(err).NotTo(HaveOccurred())
			Expect(out.Finalizers).To(BeEmpty())
			Expect(out.ResourceVersion).To(Equal(marked.ResourceVersion), "the answer is the object as sent")
			evs := next(w, 1)
			Expect(evs[0].Type).To(BeEquivalentTo("DELETED"))
			gone := evs[0].Object.(*corev1.ConfigMap)
			Expect(rv(gone.ResourceVersion)).To(BeNumerically(">", rv(marked.ResourceVersion)))
			Expect(gone.Finalizers).To(Equal([]string{holdFinalizer}), "the last stored state")
			_, err = e.c.GetConfigMap(ctx, e.ns, "held")
			Expect(status(err).Code).To(BeEquivalentTo(404))
		})

		v.it("a merge patch that removes the last finalizer deletes the object too", func(ctx SpecContext) {
			markedBy(ctx, metav1.DeleteOptions{})
			out, err := e.c.PatchConfigMap(ctx, e.ns, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(out.Finalizers).To(BeEmpty())
			_, err = e.c.GetConfigMap(ctx, e.ns, "held")
			Expect(status(err).Code).To(BeEquivalentTo(404))
		})

		for _, tc := range []struct {
			policy metav1.DeletionPropagation
			want   []string
		}{
			{metav1.DeletePropagationOrphan, []string{holdFinalizer, metav1.FinalizerOrphanDependents}},
			{metav1.DeletePropagationForeground, []string{holdFinalizer, metav1.FinalizerDeleteDependents}},
			{metav1.DeletePropagationBackground, []string{holdFinalizer}},
		} {
			v.it(fmt.Sprintf("propagationPolicy %s leaves finalizers %v", tc.policy, tc.want), func(ctx SpecContext) {
				marked := markedBy(ctx, metav1.DeleteOptions{PropagationPolicy: &tc.policy})
				Expect(marked.Finalizers).To(Equal(tc.want))
				Expect(marked.DeletionTimestamp).NotTo(BeNil())
			})
		}

		v.it("an Orphan delete keeps an object with no finalizers; a Background one then deletes it", func(ctx SpecContext) {
			a := e.create(ctx, "a", nil)
			orphan, background := metav1.DeletePropagationOrphan, metav1.DeletePropagationBackground
			out, err := e.c.DeleteConfigMapWith(ctx, e.ns, "a", metav1.DeleteOptions{PropagationPolicy: &orphan})
			Expect(err).NotTo(HaveOccurred())
			Expect(out).NotTo(BeNil())
			Expect(out.Finalizers).To(Equal([]string{metav1.FinalizerOrphanDependents}))
			Expect(out.UID).To(Equal(a.UID))
			out, err = e.c.DeleteConfigMapWith(ctx, e.ns, "a", metav1.DeleteOptions{PropagationPolicy: &background})
			Expect(err).NotTo(HaveOccurred())
			Expect(out).To(BeNil(), "deleted")
		})

		v.it("an unknown propagationPolicy is 422 Invalid on DeleteOptions", func(ctx SpecContext) {
			bogus := metav1.DeletionPropagation("Bogus")
			_, err := e.c.DeleteConfigMapWith(ctx, e.ns, "held", metav1.DeleteOptions{PropagationPolicy: &bogus})
			st := status(err)
			Expect(st.Code).To(BeEquivalentTo(422))
			Expect(st.Message).To(Equal(`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil"`))
		})

		v.it("a create in a namespace being deleted is 403 Forbidden with the NamespaceTerminating cause", func(ctx SpecContext) {
			// held keeps the namespace terminating on the fake, which
			// does the namespace controller's work; no controller runs
			// beside the real server.
			Expect(e.c.DeleteNamespace(ctx, e.ns)).To(Succeed())
			want := metav1.Status{Code: 403, Reason: metav1.StatusReasonForbidden,
				Message: fmt.Sprintf(`configmaps "x" is forbidden: unable to create new content in namespace %s because it is being terminated`, e.ns),
				Details: &metav1.StatusDetails{Name: "x", Kind: "configmaps", Causes: []metav1.StatusCause{{
					Type: corev1.NamespaceTerminatingCause, Message: fmt.Sprintf("namespace %s is being terminated", e.ns), Field: "metadata.namespace"}}}}
			want.Status = metav1.StatusFailure
			// The real server's admission reads namespaces from an
			// informer: the phase reaches it a moment later.
			Eventually(func() metav1.Status {
				_, err := e.c.CreateConfigMap(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "x"}})
				return status(err)
			}).WithTimeout(eventTimeout).Should(Equal(want))
			Expect(e.get(ctx, "held").UID).To(Equal(held.UID), "held is still there: marked on the fake, untouched on the real server")
		})

		v.it("a create drops deletionTimestamp and deletionGracePeriodSeconds", func(ctx SpecContext) {
			now := metav1.Now()
			var grace int64 = 30
			out, err := e.c.CreateConfigMap(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Namespace: e.ns, Name: "d", DeletionTimestamp: &now, DeletionGracePeriodSeconds: &grace}})
			Expect(err).NotTo(HaveOccurred())
			Expect(out.DeletionTimestamp).To(BeNil())
			Expect(out.DeletionGracePeriodSeconds).To(BeNil())
		})
	})
}
