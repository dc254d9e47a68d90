package conformance

import (
	"encoding/base64"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// paginationSpecs: limit, continue and remainingItemCount.
func paginationSpecs(v variant, e *env) {
	Describe("pagination", func() {
		var rvs []string // of c, a, e, b, d

		BeforeEach(func(ctx SpecContext) {
			rvs = e.createAll(ctx, "c", "a", "e", "b", "d")
		})

		v.it("pages in key order, every page at the first page's resource version", func(ctx SpecContext) {
			p1 := e.list(ctx, metav1.ListOptions{Limit: 2})
			Expect(items(p1)).To(Equal([]string{"a@" + rvs[1], "b@" + rvs[3]}))
			Expect(p1.RemainingItemCount).To(HaveValue(BeEquivalentTo(3)))
			Expect(p1.Continue).NotTo(BeEmpty())

			// Writes between pages are not seen by later pages.
			e.update(ctx, e.get(ctx, "c"), nil, map[string]string{"changed": "yes"})
			e.remove(ctx, "d")
			e.create(ctx, "cc", nil)

			p2 := e.list(ctx, metav1.ListOptions{Limit: 2, Continue: p1.Continue})
			Expect(items(p2)).To(Equal([]string{"c@" + rvs[0], "d@" + rvs[4]}))
			Expect(p2.ResourceVersion).To(Equal(p1.ResourceVersion))
			Expect(p2.RemainingItemCount).To(HaveValue(BeEquivalentTo(1)))

			p3 := e.list(ctx, metav1.ListOptions{Limit: 2, Continue: p2.Continue})
			Expect(items(p3)).To(Equal([]string{"e@" + rvs[2]}))
			Expect(p3.ResourceVersion).To(Equal(p1.ResourceVersion))
			Expect(p3.Continue).To(BeEmpty())
			Expect(p3.RemainingItemCount).To(BeNil())
		})

		v.it("NotOlderThan N with a limit pages the latest state", func(ctx SpecContext) {
			e.update(ctx, e.get(ctx, "a"), nil, map[string]string{"k": "v"})
			latest := e.list(ctx, metav1.ListOptions{})
			p1 := e.list(ctx, metav1.ListOptions{ResourceVersion: rvs[0], ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Limit: 2})
			Expect(items(p1)).To(Equal(items(latest)[:2]))
			Expect(rv(p1.ResourceVersion)).To(BeNumerically(">=", rv(latest.Items[0].ResourceVersion)))
			Expect(p1.RemainingItemCount).To(HaveValue(BeEquivalentTo(3)))
		})

		v.it("continuing an Exact N list keeps reading at N", func(ctx SpecContext) {
			e.remove(ctx, "a")
			p1 := e.list(ctx, metav1.ListOptions{ResourceVersion: rvs[3], ResourceVersionMatch: metav1.ResourceVersionMatchExact, Limit: 2})
			Expect(items(p1)).To(Equal([]string{"a@" + rvs[1], "b@" + rvs[3]}))
			p2 := e.list(ctx, metav1.ListOptions{Limit: 2, Continue: p1.Continue})
			Expect(items(p2)).To(Equal([]string{"c@" + rvs[0], "e@" + rvs[2]}))
			Expect(p2.ResourceVersion).To(Equal(rvs[3]))
			Expect(p2.Continue).To(BeEmpty())
		})

		v.it("a negative limit is ignored", func(ctx SpecContext) {
			l := e.list(ctx, metav1.ListOptions{Limit: -1})
			Expect(items(l)).To(HaveLen(5))
			Expect(l.Continue).To(BeEmpty())
		})

		v.it("a page that ends exactly at the last item has no continue token", func(ctx SpecContext) {
			l := e.list(ctx, metav1.ListOptions{Limit: 5})
			Expect(items(l)).To(HaveLen(5))
			Expect(l.Continue).To(BeEmpty())
			Expect(l.RemainingItemCount).To(BeNil())
		})

		v.it("with a selector, omits remainingItemCount", func(ctx SpecContext) {
			l := e.list(ctx, metav1.ListOptions{Limit: 2, FieldSelector: "metadata.name!=a"})
			Expect(items(l)).To(Equal([]string{"b@" + rvs[3], "c@" + rvs[0]}))
			Expect(l.Continue).NotTo(BeEmpty())
			Expect(l.RemainingItemCount).To(BeNil())
		})

		v.it("encodes the continue token as base64url JSON {v, rv, start: \"/<last name>\\x00\"}", func(ctx SpecContext) {
			l := e.list(ctx, metav1.ListOptions{Limit: 2})
			raw, err := base64.RawURLEncoding.DecodeString(l.Continue)
			Expect(err).NotTo(HaveOccurred())
			var tok map[string]any
			Expect(json.Unmarshal(raw, &tok)).To(Succeed())
			Expect(tok).To(Equal(map[string]any{
				"v":     "meta.k8s.io/v1",
				"rv":    float64(rv(l.ResourceVersion)),
				"start": "/b\x00",
			}))
		})
	})
}
