package conformance

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// writeSpecs: what writes do to resource versions and events, and the
// Statuses of rejected writes.
func writeSpecs(v variant, e *env) {
	Describe("writes", func() {
		var a *corev1.ConfigMap

		BeforeEach(func(ctx SpecContext) {
			a = e.create(ctx, "a", nil)
		})

		v.it("an update that changes nothing keeps the resourceVersion and sends no event", func(ctx SpecContext) {
			w := e.watch(ctx, metav1.ListOptions{ResourceVersion: a.ResourceVersion})
			same, err := e.c.UpdateConfigMap(ctx, a)
			Expect(err).NotTo(HaveOccurred())
			Expect(same.ResourceVersion).To(Equal(a.ResourceVersion))
			Expect(e.get(ctx, "a").ResourceVersion).To(Equal(a.ResourceVersion))
			sentinel := e.create(ctx, "zz", nil)
			Expect(nextDescribed(w, 1)).To(Equal([]string{"ADDED " + at(sentinel)}), "no event for the no-op update")
		})

		v.it("an update without a resourceVersion is unconditional", func(ctx SpecContext) {
			e.update(ctx, a, nil, map[string]string{"k": "1"})
			blind := a.DeepCopy()
			blind.ResourceVersion = ""
			blind.Data = map[string]string{"k": "2"}
			out, err := e.c.UpdateConfigMap(ctx, blind)
			Expect(err).NotTo(HaveOccurred())
			Expect(out.Data).To(Equal(map[string]string{"k": "2"}))
			Expect(out.UID).To(Equal(a.UID))
		})

		v.it("an update whose UID does not match is 409 Conflict from the storage precondition", func(ctx SpecContext) {
			wrong := a.DeepCopy()
			wrong.UID = "00000000-0000-0000-0000-00000000dead"
			wrong.Data = map[string]string{"k": "1"}
			_, err := e.c.UpdateConfigMap(ctx, wrong)
			expectStatus(err, metav1.Status{Code: 409, Reason: metav1.StatusReasonConflict,
				Message: fmt.Sprintf(`Operation cannot be fulfilled on configmaps "a": StorageError: invalid object, Code: 4, Key: /registry/configmaps/%s/a, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s`,
					e.ns, wrong.UID, a.UID),
				Details: &metav1.StatusDetails{Name: "a", Kind: "configmaps"}})
		})

		v.it("a create with a resourceVersion set is a 500 with no reason", func(ctx SpecContext) {
			_, err := e.c.CreateConfigMap(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "b", ResourceVersion: a.ResourceVersion}})
			expectStatus(err, metav1.Status{Code: 500, Message: "resourceVersion should not be set on objects to be created"})
		})

		v.it("a create without a name or generateName is 422 Invalid with a Required cause", func(ctx SpecContext) {
			_, err := e.c.CreateConfigMap(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns}})
			expectStatus(err, metav1.Status{Code: 422, Reason: metav1.StatusReasonInvalid,
				Message: `ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required`,
				Details: &metav1.StatusDetails{Kind: "ConfigMap", Causes: []metav1.StatusCause{{
					Type: metav1.CauseType(field.ErrorTypeRequired), Message: "Required value: name or generateName is required", Field: "metadata.name"}}}})
		})

		v.it("generateName appends a five-character suffix", func(ctx SpecContext) {
			cm, err := e.c.CreateConfigMap(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, GenerateName: "gen-"}})
			Expect(err).NotTo(HaveOccurred())
			Expect(cm.Name).To(MatchRegexp(`^gen-[a-z0-9]{5}$`))
			Expect(cm.UID).NotTo(BeEmpty())
			Expect(cm.CreationTimestamp.IsZero()).To(BeFalse())
		})

		v.it("a create in a namespace that does not exist is 404 NotFound on the namespace", func(ctx SpecContext) {
			_, err := e.c.CreateConfigMap(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "no-such-namespace", Name: "a"}})
			expectStatus(err, metav1.Status{Code: 404, Reason: metav1.StatusReasonNotFound,
				Message: `namespaces "no-such-namespace" not found`,
				Details: &metav1.StatusDetails{Name: "no-such-namespace", Kind: "namespaces"}})
		})

		v.it("a create with an invalid label value is 422 Invalid", func(ctx SpecContext) {
			_, err := e.c.CreateConfigMap(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "b", Labels: map[string]string{"app": "bad value!"}}})
			st := status(err)
			Expect(st.Code).To(BeEquivalentTo(422))
			Expect(st.Reason).To(Equal(metav1.StatusReasonInvalid))
			Expect(st.Message).To(HavePrefix(`ConfigMap "b" is invalid: metadata.labels: Invalid value: "bad value!": a valid label must be an empty string or consist of alphanumeric characters`))
		})

		v.it("a create with an invalid name is 422 Invalid", func(ctx SpecContext) {
			_, err := e.c.CreateConfigMap(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "Bad_Name"}})
			st := status(err)
			Expect(st.Code).To(BeEquivalentTo(422))
			Expect(st.Reason).To(Equal(metav1.StatusReasonInvalid))
			Expect(st.Message).To(HavePrefix(`ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of`))
		})

		v.it("written objects carry metadata.managedFields for the writer", func(ctx SpecContext) {
			// An object with no fields set (like a) has no entry.
			m, err := e.c.CreateConfigMap(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "m"}, Data: map[string]string{"k": "v"}})
			Expect(err).NotTo(HaveOccurred())
			Expect(m.ManagedFields).To(HaveLen(1))
			Expect(m.ManagedFields[0].Operation).To(Equal(metav1.ManagedFieldsOperationUpdate))
			Expect(m.ManagedFields[0].APIVersion).To(Equal("v1"))
			Expect(m.ManagedFields[0].Manager).NotTo(BeEmpty())
			Expect(e.list(ctx, metav1.ListOptions{FieldSelector: "metadata.name=m"}).Items[0].ManagedFields).To(Equal(m.ManagedFields), "lists return them too")
		})
	})
}
