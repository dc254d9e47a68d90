package conformance

import (
	"fmt"
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// errorSpecs: the Status of each error, code, reason, message and details.
func errorSpecs(v variant, e *env) {
	Describe("error statuses", func() {
		var a *corev1.ConfigMap

		BeforeEach(func(ctx SpecContext) {
			a = e.create(ctx, "a", nil)
		})

		v.it("a user without RBAC permissions gets 403 Forbidden on list and watch", func(ctx SpecContext) {
			_, err := e.c.UnprivilegedListConfigMaps(ctx, e.ns, metav1.ListOptions{})
			expectForbidden(err, "list", e.ns)
			_, err = e.c.UnprivilegedWatchConfigMaps(ctx, e.ns, metav1.ListOptions{})
			expectForbidden(err, "watch", e.ns)
		})

		v.it("get, update and delete of a missing object are 404 NotFound", func(ctx SpecContext) {
			notFound := metav1.Status{Code: 404, Reason: metav1.StatusReasonNotFound,
				Message: `configmaps "missing" not found`,
				Details: &metav1.StatusDetails{Name: "missing", Kind: "configmaps"}}
			_, err := e.c.GetConfigMap(ctx, e.ns, "missing")
			expectStatus(err, notFound)
			_, err = e.c.UpdateConfigMap(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "missing"}})
			expectStatus(err, notFound)
			expectStatus(e.c.DeleteConfigMap(ctx, e.ns, "missing", nil), notFound)
		})

		v.it("creating an existing object is 409 AlreadyExists", func(ctx SpecContext) {
			_, err := e.c.CreateConfigMap(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "a"}})
			expectStatus(err, metav1.Status{Code: 409, Reason: metav1.StatusReasonAlreadyExists,
				Message: `configmaps "a" already exists`,
				Details: &metav1.StatusDetails{Name: "a", Kind: "configmaps"}})
		})

		v.it("updating with a stale resourceVersion is 409 Conflict", func(ctx SpecContext) {
			e.update(ctx, a, nil, map[string]string{"k": "1"})
			stale := a.DeepCopy()
			stale.Data = map[string]string{"k": "2"}
			_, err := e.c.UpdateConfigMap(ctx, stale)
			expectStatus(err, metav1.Status{Code: 409, Reason: metav1.StatusReasonConflict,
				Message: `Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again`,
				Details: &metav1.StatusDetails{Name: "a", Kind: "configmaps"}})
		})

		v.it("deleting with a stale resourceVersion precondition is 409 Conflict on kind ConfigMap", func(ctx SpecContext) {
			cur := e.update(ctx, a, nil, map[string]string{"k": "1"})
			err := e.c.DeleteConfigMap(ctx, e.ns, "a", &metav1.Preconditions{ResourceVersion: ptr.To(a.ResourceVersion)})
			expectStatus(err, metav1.Status{Code: 409, Reason: metav1.StatusReasonConflict,
				Message: fmt.Sprintf(`Operation cannot be fulfilled on ConfigMap "a": the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified`, a.ResourceVersion, cur.ResourceVersion),
				Details: &metav1.StatusDetails{Name: "a", Kind: "ConfigMap"}})
		})

		v.it("deleting with a wrong UID precondition is 409 Conflict on kind ConfigMap", func(ctx SpecContext) {
			wrong := types.UID("00000000-0000-0000-0000-00000000dead")
			err := e.c.DeleteConfigMap(ctx, e.ns, "a", &metav1.Preconditions{UID: &wrong})
			expectStatus(err, metav1.Status{Code: 409, Reason: metav1.StatusReasonConflict,
				Message: fmt.Sprintf(`Operation cannot be fulfilled on ConfigMap "a": the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated`, wrong, a.UID),
				Details: &metav1.StatusDetails{Name: "a", Kind: "ConfigMap"}})
		})

		invalidOptionSpecs(v, e)
	})
}

// invalidOptionSpecs: requests whose options kube-apiserver rejects.
func invalidOptionSpecs(v variant, e *env) {
	v.it("sendInitialEvents without resourceVersionMatch=NotOlderThan is 422 Invalid", func(ctx SpecContext) {
		_, err := e.c.WatchConfigMaps(ctx, e.ns, metav1.ListOptions{SendInitialEvents: ptr.To(true)})
		msg := "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
		expectStatus(err, metav1.Status{Code: 422, Reason: metav1.StatusReasonInvalid,
			Message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: ` + msg,
			Details: &metav1.StatusDetails{Group: "meta.k8s.io", Kind: "ListOptions", Causes: []metav1.StatusCause{
				{Type: metav1.CauseType(field.ErrorTypeForbidden), Message: msg, Field: "resourceVersionMatch"}}}})
	})

	v.it("resourceVersionMatch without resourceVersion is 422 Invalid", func(ctx SpecContext) {
		_, err := e.c.ListConfigMaps(ctx, e.ns, metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		msg := "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
		expectStatus(err, metav1.Status{Code: 422, Reason: metav1.StatusReasonInvalid,
			Message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: ` + msg,
			Details: &metav1.StatusDetails{Group: "meta.k8s.io", Kind: "ListOptions", Causes: []metav1.StatusCause{
				{Type: metav1.CauseType(field.ErrorTypeForbidden), Message: msg, Field: "resourceVersionMatch"}}}})
	})

	v.it("resourceVersionMatch on a watch without sendInitialEvents is 422 Invalid", func(ctx SpecContext) {
		_, err := e.c.WatchConfigMaps(ctx, e.ns, metav1.ListOptions{ResourceVersion: "1", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		forbidden := "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
		unsupported := `Unsupported value: "Exact": supported values: "NotOlderThan"`
		expectStatus(err, metav1.Status{Code: 422, Reason: metav1.StatusReasonInvalid,
			Message: `ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: ` + forbidden + `, resourceVersionMatch: ` + unsupported + `]`,
			Details: &metav1.StatusDetails{Group: "meta.k8s.io", Kind: "ListOptions", Causes: []metav1.StatusCause{
				{Type: metav1.CauseType(field.ErrorTypeForbidden), Message: forbidden, Field: "resourceVersionMatch"},
				{Type: metav1.CauseType(field.ErrorTypeNotSupported), Message: unsupported, Field: "resourceVersionMatch"}}}})
	})

	v.it(`resourceVersionMatch=Exact with resourceVersion "0" is 422 Invalid`, func(ctx SpecContext) {
		_, err := e.c.ListConfigMaps(ctx, e.ns, metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		msg := `Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`
		expectStatus(err, metav1.Status{Code: 422, Reason: metav1.StatusReasonInvalid,
			Message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: ` + msg,
			Details: &metav1.StatusDetails{Group: "meta.k8s.io", Kind: "ListOptions", Causes: []metav1.StatusCause{
				{Type: metav1.CauseType(field.ErrorTypeForbidden), Message: msg, Field: "resourceVersionMatch"}}}})
	})

	v.it("a resourceVersion that is not a number is 400 BadRequest", func(ctx SpecContext) {
		_, err := e.c.ListConfigMaps(ctx, e.ns, metav1.ListOptions{ResourceVersion: "abc"})
		expectStatus(err, metav1.Status{Code: 400, Reason: metav1.StatusReasonBadRequest,
			Message: `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`})
	})

	v.it("continue together with a resourceVersion is 400 BadRequest", func(ctx SpecContext) {
		e.create(ctx, "b", nil)
		p1 := e.list(ctx, metav1.ListOptions{Limit: 1})
		_, err := e.c.ListConfigMaps(ctx, e.ns, metav1.ListOptions{Limit: 1, Continue: p1.Continue, ResourceVersion: p1.ResourceVersion})
		expectStatus(err, metav1.Status{Code: 400, Reason: metav1.StatusReasonBadRequest,
			Message: "specifying resource version is not allowed when using continue"})
	})

	v.it("a malformed continue token is 400 BadRequest", func(ctx SpecContext) {
		_, err := e.c.ListConfigMaps(ctx, e.ns, metav1.ListOptions{Limit: 1, Continue: "garbage"})
		expectStatus(err, metav1.Status{Code: 400, Reason: metav1.StatusReasonBadRequest,
			Message: `invalid continue token: continue key is not valid: invalid character '\u0081' looking for beginning of value`})
	})

	v.it("an unsupported field selector is 400 BadRequest", func(ctx SpecContext) {
		_, err := e.c.ListConfigMaps(ctx, e.ns, metav1.ListOptions{FieldSelector: "data.x=b"})
		expectStatus(err, metav1.Status{Code: 400, Reason: metav1.StatusReasonBadRequest,
			Message: `"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"`})
	})

	v.it("a malformed label selector is 400 BadRequest", func(ctx SpecContext) {
		_, err := e.c.ListConfigMaps(ctx, e.ns, metav1.ListOptions{LabelSelector: "a=(b"})
		expectStatus(err, metav1.Status{Code: 400, Reason: metav1.StatusReasonBadRequest,
			Message: "unable to parse requirement: found '(', expected: identifier"})
	})
}

// expectForbidden checks RBAC's 403; the user's name is the only part that
// depends on the server.
func expectForbidden(err error, verb, namespace string) {
	GinkgoHelper()
	st := status(err)
	Expect(st.Code).To(BeEquivalentTo(403))
	Expect(st.Reason).To(Equal(metav1.StatusReasonForbidden))
	Expect(st.Details).To(Equal(&metav1.StatusDetails{Kind: "configmaps"}))
	Expect(st.Message).To(MatchRegexp(`^configmaps is forbidden: User "[^"]+" cannot %s resource "configmaps" in API group "" in the namespace "%s"$`,
		verb, regexp.QuoteMeta(namespace)))
}
