package conformance

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// selectorSpecs: label and field selectors on lists and watches, including
// objects that leave and enter a watched selector.
func selectorSpecs(v variant, e *env) {
	Describe("selectors", func() {
		var a, b, c *corev1.ConfigMap // app=x, app=y, app=x

		BeforeEach(func(ctx SpecContext) {
			a = e.create(ctx, "a", map[string]string{"app": "x"})
			b = e.create(ctx, "b", map[string]string{"app": "y"})
			c = e.create(ctx, "c", map[string]string{"app": "x"})
		})

		v.it("filter lists by label and by metadata.name", func(ctx SpecContext) {
			Expect(items(e.list(ctx, metav1.ListOptions{LabelSelector: "app=x"}))).To(Equal([]string{at(a), at(c)}))
			Expect(items(e.list(ctx, metav1.ListOptions{LabelSelector: "app notin (x)"}))).To(Equal([]string{at(b)}))
			Expect(items(e.list(ctx, metav1.ListOptions{FieldSelector: "metadata.name=b"}))).To(Equal([]string{at(b)}))
			Expect(items(e.list(ctx, metav1.ListOptions{FieldSelector: "metadata.namespace=" + e.ns}))).To(Equal([]string{at(a), at(b), at(c)}))
			Expect(items(e.list(ctx, metav1.ListOptions{LabelSelector: "app=x", FieldSelector: "metadata.name!=a"}))).To(Equal([]string{at(c)}))
		})

		v.it("pages a selected list by matching items", func(ctx SpecContext) {
			e.create(ctx, "d", map[string]string{"app": "y"})
			last := e.create(ctx, "e", map[string]string{"app": "x"})
			p1 := e.list(ctx, metav1.ListOptions{LabelSelector: "app=x", Limit: 2})
			Expect(items(p1)).To(Equal([]string{at(a), at(c)}))
			Expect(p1.Continue).NotTo(BeEmpty())
			p2 := e.list(ctx, metav1.ListOptions{LabelSelector: "app=x", Limit: 2, Continue: p1.Continue})
			Expect(items(p2)).To(Equal([]string{at(last)}))
			Expect(p2.Continue).To(BeEmpty())
			Expect(p2.ResourceVersion).To(Equal(p1.ResourceVersion))
		})

		v.it(`a selected watch from resourceVersion "0" opens with ADDED for the matching objects only`, func(ctx SpecContext) {
			e.waitCacheHas(ctx, at(c))
			w := e.watch(ctx, metav1.ListOptions{LabelSelector: "app=x", ResourceVersion: "0"})
			Expect(nextDescribed(w, 2)).To(Equal([]string{"ADDED " + at(a) + " app=x", "ADDED " + at(c) + " app=x"}))
			sentinel := e.create(ctx, "zz", map[string]string{"app": "x"})
			Expect(nextDescribed(w, 1)).To(Equal([]string{"ADDED " + at(sentinel) + " app=x"}))
		})

		v.it("a label-selected watch sees an object leave (DELETED, old state at the new RV) and enter (ADDED)", func(ctx SpecContext) {
			w := e.watch(ctx, metav1.ListOptions{LabelSelector: "app=x", ResourceVersion: c.ResourceVersion})
			left := e.update(ctx, a, map[string]string{"app": "y"}, nil)    // a leaves
			entered := e.update(ctx, b, map[string]string{"app": "x"}, nil) // b enters
			e.update(ctx, left, map[string]string{"app": "z"}, nil)         // a stays outside: unseen
			changed := e.update(ctx, c, map[string]string{"app": "x"}, map[string]string{"k": "v"})
			e.remove(ctx, "b")
			sentinel := e.create(ctx, "zz", map[string]string{"app": "x"})
			got := nextDescribed(w, 5)
			Expect(got[:3]).To(Equal([]string{
				"DELETED a@" + left.ResourceVersion + " app=x",
				"ADDED " + at(entered) + " app=x",
				"MODIFIED " + at(changed) + " app=x",
			}))
			Expect(got[3]).To(MatchRegexp(`^DELETED b@\d+ app=x$`))
			Expect(got[4]).To(Equal("ADDED " + at(sentinel) + " app=x"))
		})

		v.it("a metadata.name-selected watch sees only that object", func(ctx SpecContext) {
			w := e.watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=b", ResourceVersion: c.ResourceVersion})
			e.update(ctx, a, nil, map[string]string{"k": "v"})
			b2 := e.update(ctx, b, map[string]string{"app": "x"}, nil)
			e.remove(ctx, "c")
			e.remove(ctx, "b")
			again := e.create(ctx, "b", nil)
			got := nextDescribed(w, 3)
			Expect(got[0]).To(Equal("MODIFIED " + at(b2) + " app=x"))
			Expect(got[1]).To(MatchRegexp(`^DELETED b@\d+ app=x$`))
			Expect(got[2]).To(Equal("ADDED " + at(again)))
		})

		v.it("sendInitialEvents with a selector sends only the matching objects", func(ctx SpecContext) {
			w := e.watch(ctx, metav1.ListOptions{
				LabelSelector:        "app=x",
				SendInitialEvents:    ptr.To(true),
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
				ResourceVersion:      c.ResourceVersion,
				AllowWatchBookmarks:  true,
			})
			evs := next(w, 3)
			Expect(describe(evs[0])).To(Equal("ADDED " + at(a) + " app=x"))
			Expect(describe(evs[1])).To(Equal("ADDED " + at(c) + " app=x"))
			expectInitialEventsEnd(evs[2], c.ResourceVersion)
		})
	})
}
