package conformance

import (
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// watchSpecs: where a watch starts and what it opens with.
func watchSpecs(v variant, e *env) {
	Describe("watch", func() {
		var rvs []string // of c, a, e, b, d

		BeforeEach(func(ctx SpecContext) {
			rvs = e.createAll(ctx, "c", "a", "e", "b", "d")
		})

		v.it("from resourceVersion N replays exactly the events after N, then live ones", func(ctx SpecContext) {
			a := e.update(ctx, e.get(ctx, "a"), nil, map[string]string{"k": "1"})
			e.remove(ctx, "b")
			secret, err := e.c.CreateSecret(ctx, e.ns, "other-type")
			Expect(err).NotTo(HaveOccurred())
			f := e.create(ctx, "f", nil)

			w := e.watch(ctx, metav1.ListOptions{ResourceVersion: rvs[2]}) // after e
			got := next(w, 4)
			Expect(describe(got[0])).To(Equal("ADDED b@" + rvs[3]))
			Expect(describe(got[1])).To(Equal("ADDED d@" + rvs[4]))
			Expect(describe(got[2])).To(Equal("MODIFIED " + at(a)))
			// The deletion carries the deletion's RV, between the update
			// and the Secret; the Secret is another type and not seen.
			Expect(got[3].Type).To(Equal(watch.Deleted))
			deleted := got[3].Object.(*corev1.ConfigMap)
			Expect(deleted.Name).To(Equal("b"))
			Expect(rv(deleted.ResourceVersion)).To(And(BeNumerically(">", rv(a.ResourceVersion)), BeNumerically("<", rv(secret.ResourceVersion))))
			Expect(nextDescribed(w, 1)).To(Equal([]string{"ADDED " + at(f)}))

			live := e.create(ctx, "g", nil)
			Expect(nextDescribed(w, 1)).To(Equal([]string{"ADDED " + at(live)}))
		})

		v.it("from a future resourceVersion delivers only the events after it", func(ctx SpecContext) {
			future := rv(e.list(ctx, metav1.ListOptions{}).ResourceVersion) + 2
			w := e.watch(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatUint(future, 10)})
			var want []string
			for _, name := range []string{"f", "g", "h", "i"} {
				// Other writers on a shared server may take some of the RVs.
				if cm := e.create(ctx, name, nil); rv(cm.ResourceVersion) > future {
					want = append(want, "ADDED "+at(cm))
				}
			}
			Expect(want).NotTo(BeEmpty())
			Expect(nextDescribed(w, len(want))).To(Equal(want))
		})

		for _, start := range []string{"", "0"} {
			v.it(`from resourceVersion "`+start+`" opens with a synthetic ADDED per object in key order, then live events`, func(ctx SpecContext) {
				e.waitCacheHas(ctx, "d@"+rvs[4])
				// Without allowWatchBookmarks: with it, kube-apiserver may put a
				// plain BOOKMARK right after the initial events (see bookmarkSpecs).
				w := e.watch(ctx, metav1.ListOptions{ResourceVersion: start})
				Expect(nextDescribed(w, 5)).To(Equal([]string{"ADDED a@" + rvs[1], "ADDED b@" + rvs[3], "ADDED c@" + rvs[0], "ADDED d@" + rvs[4], "ADDED e@" + rvs[2]}))
				live := e.create(ctx, "f", nil)
				Expect(nextDescribed(w, 1)).To(Equal([]string{"ADDED " + at(live)}))
			})
		}

		v.it("with sendInitialEvents opens with the latest state in key order and an initial-events-end bookmark", func(ctx SpecContext) {
			a := e.update(ctx, e.get(ctx, "a"), nil, map[string]string{"k": "1"})
			secret, err := e.c.CreateSecret(ctx, e.ns, "other-type")
			Expect(err).NotTo(HaveOccurred())
			w := e.watch(ctx, metav1.ListOptions{
				SendInitialEvents:    ptr.To(true),
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
				ResourceVersion:      rvs[0], // older than the state: the latest state is sent anyway
				AllowWatchBookmarks:  true,
			})
			got := next(w, 6)
			descs := make([]string, 5)
			for i, ev := range got[:5] {
				descs[i] = describe(ev)
			}
			Expect(descs).To(Equal([]string{"ADDED " + at(a), "ADDED b@" + rvs[3], "ADDED c@" + rvs[0], "ADDED d@" + rvs[4], "ADDED e@" + rvs[2]}))
			// Not necessarily the Secret's RV: a watch cache's bookmark carries the
			// RV its own resource has reached, which may lag other types' writes.
			expectInitialEventsEnd(got[5], a.ResourceVersion)
			Expect(secret.ResourceVersion).NotTo(BeEmpty())

			live := e.create(ctx, "f", nil)
			Expect(nextDescribed(w, 1)).To(Equal([]string{"ADDED " + at(live)}))
		})

		v.it("with sendInitialEvents but without allowWatchBookmarks sends no bookmark", func(ctx SpecContext) {
			e.waitCacheHas(ctx, "d@"+rvs[4])
			w := e.watch(ctx, metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
			Expect(next(w, 5)).To(HaveEach(HaveField("Type", watch.Added)))
			live := e.create(ctx, "f", nil)
			Expect(nextDescribed(w, 1)).To(Equal([]string{"ADDED " + at(live)}), "no bookmark before the live event")
		})

		v.it("with sendInitialEvents=false and NotOlderThan N replays the events after N", func(ctx SpecContext) {
			w := e.watch(ctx, metav1.ListOptions{SendInitialEvents: ptr.To(false), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, ResourceVersion: rvs[2]})
			Expect(nextDescribed(w, 2)).To(Equal([]string{"ADDED b@" + rvs[3], "ADDED d@" + rvs[4]}))
		})

		v.it("with sendInitialEvents at a future resourceVersion sends one 504 ERROR event and closes", func(ctx SpecContext) {
			future := strconv.FormatUint(rv(rvs[4])+1_000_000, 10)
			w := e.watch(ctx, metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, ResourceVersion: future, AllowWatchBookmarks: true})
			evs := drain(w, eventTimeout)
			Expect(evs).To(HaveLen(1))
			Expect(evs[0].Type).To(Equal(watch.Error))
			st, ok := evs[0].Object.(*metav1.Status)
			Expect(ok).To(BeTrue(), "ERROR carries a *metav1.Status, got %T", evs[0].Object)
			expectTooLarge(&apierrors.StatusError{ErrStatus: *st}, future, rvs[4])
		})
	})
}

// expectInitialEventsEnd checks the bookmark that ends a watch's initial
// events: an empty ConfigMap with the annotation, at an RV not older than
// minRV.
func expectInitialEventsEnd(ev watch.Event, minRV string) {
	GinkgoHelper()
	Expect(ev.Type).To(Equal(watch.Bookmark))
	bm, ok := ev.Object.(*corev1.ConfigMap)
	Expect(ok).To(BeTrue(), "bookmark object %T", ev.Object)
	bm = bm.DeepCopy() // checked destructively below
	Expect(bm.Annotations).To(Equal(map[string]string{metav1.InitialEventsAnnotationKey: "true"}))
	Expect(rv(bm.ResourceVersion)).To(BeNumerically(">=", rv(minRV)))
	bm.Annotations, bm.ResourceVersion = nil, ""
	Expect(bm).To(Equal(&corev1.ConfigMap{}), "a bookmark has only a resourceVersion and annotations")
}
