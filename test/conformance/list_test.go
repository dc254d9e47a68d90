package conformance

import (
	"fmt"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// listSpecs: resourceVersion and resourceVersionMatch semantics of lists.
func listSpecs(v variant, e *env) {
	Describe("list", func() {
		var rvs []string // of c, a, e, b, d, written in that order

		BeforeEach(func(ctx SpecContext) {
			rvs = e.createAll(ctx, "c", "a", "e", "b", "d")
		})

		v.it(`with resourceVersion "" returns the latest state in key order at the global resource version`, func(ctx SpecContext) {
			secret, err := e.c.CreateSecret(ctx, e.ns, "other-type")
			Expect(err).NotTo(HaveOccurred())
			l := e.list(ctx, metav1.ListOptions{})
			Expect(items(l)).To(Equal([]string{"a@" + rvs[1], "b@" + rvs[3], "c@" + rvs[0], "d@" + rvs[4], "e@" + rvs[2]}))
			// A Secret written after every ConfigMap moved the list's RV:
			// resource versions are global, not per type.
			Expect(rv(l.ResourceVersion)).To(BeNumerically(">=", rv(secret.ResourceVersion)))
			Expect(l.Continue).To(BeEmpty())
			Expect(l.RemainingItemCount).To(BeNil())
		})

		v.it(`with resourceVersion "0" returns the whole state and ignores limit`, func(ctx SpecContext) {
			// "0" may be served stale (from the watch cache): wait for it.
			Eventually(func() []string {
				return items(e.list(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 2}))
			}).WithTimeout(eventTimeout).Should(Equal([]string{"a@" + rvs[1], "b@" + rvs[3], "c@" + rvs[0], "d@" + rvs[4], "e@" + rvs[2]}))
			l := e.list(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 2})
			Expect(l.Continue).To(BeEmpty())
			Expect(l.RemainingItemCount).To(BeNil())
		})

		v.it("with NotOlderThan N returns a state at N or later, not the state at N", func(ctx SpecContext) {
			// A kube-apiserver serves it from its watch cache as soon as
			// that has reached N, so it may not have the newest writes yet
			// (under load it has been seen one write behind); whatever it
			// returns is the whole state at the list's resource version.
			all := []struct{ item, rv string }{{"a@" + rvs[1], rvs[1]}, {"b@" + rvs[3], rvs[3]}, {"c@" + rvs[0], rvs[0]}, {"d@" + rvs[4], rvs[4]}, {"e@" + rvs[2], rvs[2]}}
			for _, match := range []metav1.ResourceVersionMatch{metav1.ResourceVersionMatchNotOlderThan, ""} {
				Eventually(func(g Gomega) {
					l := e.list(ctx, metav1.ListOptions{ResourceVersion: rvs[0], ResourceVersionMatch: match})
					at := rv(l.ResourceVersion)
					g.Expect(at).To(BeNumerically(">=", rv(rvs[0])), "match %q", match)
					var want []string
					for _, o := range all {
						if rv(o.rv) <= at {
							want = append(want, o.item)
						}
					}
					g.Expect(items(l)).To(Equal(want), "match %q: the state at %d", match, at)
					g.Expect(at).To(BeNumerically(">=", rv(rvs[4])), "match %q: and, soon, the latest", match)
				}).WithTimeout(eventTimeout).Should(Succeed())
			}
		})

		v.it("with Exact N returns the state at N, at resource version N", func(ctx SpecContext) {
			e.update(ctx, e.get(ctx, "a"), nil, map[string]string{"k": "v"})
			l := e.list(ctx, metav1.ListOptions{ResourceVersion: rvs[2], ResourceVersionMatch: metav1.ResourceVersionMatchExact})
			Expect(items(l)).To(Equal([]string{"a@" + rvs[1], "c@" + rvs[0], "e@" + rvs[2]}))
			Expect(l.ResourceVersion).To(Equal(rvs[2]))
		})

		v.it("with Exact at another type's resource version returns the state at that RV", func(ctx SpecContext) {
			secret, err := e.c.CreateSecret(ctx, e.ns, "other-type")
			Expect(err).NotTo(HaveOccurred())
			f := e.create(ctx, "f", nil)
			l := e.list(ctx, metav1.ListOptions{ResourceVersion: secret.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
			Expect(l.ResourceVersion).To(Equal(secret.ResourceVersion))
			Expect(items(l)).To(Equal([]string{"a@" + rvs[1], "b@" + rvs[3], "c@" + rvs[0], "d@" + rvs[4], "e@" + rvs[2]}))
			w := e.watch(ctx, metav1.ListOptions{ResourceVersion: secret.ResourceVersion})
			Expect(nextDescribed(w, 1)).To(Equal([]string{"ADDED " + at(f)}), "a watch from the Secret's RV sees the next ConfigMap write")
		})

		v.it("with N, a limit and no match reads exactly at N, paged", func(ctx SpecContext) {
			l := e.list(ctx, metav1.ListOptions{ResourceVersion: rvs[2], Limit: 2})
			Expect(items(l)).To(Equal([]string{"a@" + rvs[1], "c@" + rvs[0]}))
			Expect(l.ResourceVersion).To(Equal(rvs[2]))
			Expect(l.Continue).NotTo(BeEmpty())
			Expect(l.RemainingItemCount).To(HaveValue(BeEquivalentTo(1)))
		})

		v.it("an empty list still carries the current resource version", func(ctx SpecContext) {
			secret, err := e.c.CreateSecret(ctx, e.ns, "other-type")
			Expect(err).NotTo(HaveOccurred())
			l := e.list(ctx, metav1.ListOptions{LabelSelector: "none=matches"})
			Expect(l.Items).To(BeEmpty())
			Expect(rv(l.ResourceVersion)).To(BeNumerically(">=", rv(secret.ResourceVersion)))
		})

		for _, match := range []metav1.ResourceVersionMatch{metav1.ResourceVersionMatchNotOlderThan, metav1.ResourceVersionMatchExact} {
			v.it(fmt.Sprintf("with a future resourceVersion and match %s fails with 504 Too large resource version", match), func(ctx SpecContext) {
				future := strconv.FormatUint(rv(rvs[4])+1_000_000, 10)
				_, err := e.c.ListConfigMaps(ctx, e.ns, metav1.ListOptions{ResourceVersion: future, ResourceVersionMatch: match})
				expectTooLarge(err, future, rvs[4])
			})
		}
	})
}

// expectTooLarge checks the 504 a request for a future resource version gets
// (after the watch cache waited 3 s for it).
func expectTooLarge(err error, future, current string) {
	GinkgoHelper()
	st := status(err)
	Expect(st.Code).To(BeEquivalentTo(504))
	Expect(st.Reason).To(Equal(metav1.StatusReasonTimeout))
	Expect(st.Message).To(MatchRegexp(`^Timeout: Too large resource version: %s, current: \d+$`, future))
	var cur uint64
	_, _ = fmt.Sscanf(st.Message[len("Timeout: Too large resource version: "+future+", current: "):], "%d", &cur)
	Expect(cur).To(BeNumerically(">=", rv(current)), "current is the server's resource version")
	Expect(st.Details).To(Equal(&metav1.StatusDetails{
		Causes:            []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}},
		RetryAfterSeconds: 1,
	}))
}
