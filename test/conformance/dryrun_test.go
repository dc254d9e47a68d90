package conformance

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// dryRunSpecs: dryRun=All answers of every write, and that nothing is
// written: no change, no event before a later real write's.
func dryRunSpecs(v variant, e *env) {
	Describe("dry run", func() {
		dry := []string{metav1.DryRunAll}
		var a *corev1.ConfigMap

		BeforeEach(func(ctx SpecContext) {
			a = e.create(ctx, "a", nil)
		})

		// nothingWritten checks that a is as created and that the first
		// event after it is a sentinel's.
		nothingWritten := func(ctx SpecContext) {
			GinkgoHelper()
			Expect(e.get(ctx, "a").ResourceVersion).To(Equal(a.ResourceVersion))
			w := e.watch(ctx, metav1.ListOptions{ResourceVersion: a.ResourceVersion})
			sentinel := e.create(ctx, "zz", nil)
			Expect(nextDescribed(w, 1)).To(Equal([]string{"ADDED " + at(sentinel)}), "no event for the dry run")
		}

		v.it("a create answers the object with a generated name, uid and creationTimestamp and no resourceVersion", func(ctx SpecContext) {
			out, err := e.c.CreateConfigMapWith(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, GenerateName: "gen-"}, Data: map[string]string{"k": "v"}},
				metav1.CreateOptions{DryRun: dry})
			Expect(err).NotTo(HaveOccurred())
			Expect(out.Name).To(MatchRegexp(`^gen-[a-z0-9]{5}$`))
			Expect(out.UID).NotTo(BeEmpty())
			Expect(out.CreationTimestamp.IsZero()).To(BeFalse())
			Expect(out.ResourceVersion).To(BeEmpty())
			Expect(out.Data).To(Equal(map[string]string{"k": "v"}))
			Expect(out.ManagedFields).To(HaveLen(1))
			_, err = e.c.GetConfigMap(ctx, e.ns, out.Name)
			Expect(status(err).Code).To(BeEquivalentTo(404))
			nothingWritten(ctx)
		})

		v.it("a create of a name that exists is 409 AlreadyExists", func(ctx SpecContext) {
			_, err := e.c.CreateConfigMapWith(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "a"}}, metav1.CreateOptions{DryRun: dry})
			expectStatus(err, metav1.Status{Code: 409, Reason: metav1.StatusReasonAlreadyExists,
				Message: `configmaps "a" already exists`, Details: &metav1.StatusDetails{Name: "a", Kind: "configmaps"}})
		})

		v.it("an update answers the new object at the stored resourceVersion", func(ctx SpecContext) {
			cp := a.DeepCopy()
			cp.Data = map[string]string{"k": "v"}
			out, err := e.c.UpdateConfigMapWith(ctx, cp, metav1.UpdateOptions{DryRun: dry})
			Expect(err).NotTo(HaveOccurred())
			Expect(out.ResourceVersion).To(Equal(a.ResourceVersion))
			Expect(out.Data).To(Equal(map[string]string{"k": "v"}))
			Expect(e.get(ctx, "a").Data).To(BeNil())
			nothingWritten(ctx)
		})

		v.it("a stale update is still 409 Conflict", func(ctx SpecContext) {
			e.update(ctx, a, nil, map[string]string{"k": "1"})
			_, err := e.c.UpdateConfigMapWith(ctx, a, metav1.UpdateOptions{DryRun: dry})
			Expect(status(err).Code).To(BeEquivalentTo(409))
		})

		v.it("a patch answers the patched object at the stored resourceVersion", func(ctx SpecContext) {
			out, err := e.c.PatchConfigMap(ctx, e.ns, "a", types.MergePatchType, []byte(`{"data":{"p":"q"}}`), metav1.PatchOptions{DryRun: dry})
			Expect(err).NotTo(HaveOccurred())
			Expect(out.ResourceVersion).To(Equal(a.ResourceVersion))
			Expect(out.Data).To(Equal(map[string]string{"p": "q"}))
			nothingWritten(ctx)
		})

		v.it("a delete answers the Status and deletes nothing", func(ctx SpecContext) {
			out, err := e.c.DeleteConfigMapWith(ctx, e.ns, "a", metav1.DeleteOptions{DryRun: dry})
			Expect(err).NotTo(HaveOccurred())
			Expect(out).To(BeNil())
			nothingWritten(ctx)
		})

		v.it("a delete of an object with a finalizer answers it marked, at the stored resourceVersion", func(ctx SpecContext) {
			held, err := e.c.CreateConfigMap(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Namespace: e.ns, Name: "held", Finalizers: []string{holdFinalizer}}})
			Expect(err).NotTo(HaveOccurred())
			out, err := e.c.DeleteConfigMapWith(ctx, e.ns, "held", metav1.DeleteOptions{DryRun: dry})
			Expect(err).NotTo(HaveOccurred())
			Expect(out).NotTo(BeNil())
			Expect(out.DeletionTimestamp).NotTo(BeNil())
			Expect(out.ResourceVersion).To(Equal(held.ResourceVersion))
			Expect(e.get(ctx, "held").DeletionTimestamp).To(BeNil())
		})

		v.it("a dryRun other than All is 422 Invalid on the options", func(ctx SpecContext) {
			_, err := e.c.CreateConfigMapWith(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "b"}}, metav1.CreateOptions{DryRun: []string{"Some"}})
			st := status(err)
			Expect(st.Code).To(BeEquivalentTo(422))
			Expect(st.Message).To(Equal(`CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"`))
		})
	})
}
