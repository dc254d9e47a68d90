package conformance

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// bookmarkSpecs: BOOKMARK events and server-side watch timeouts.
//
// Measured on kube-apiserver v1.36.3: the watch cache sends a watch that
// allowed bookmarks one every minute, and also from two seconds before its
// timeoutSeconds deadline on (then about once a second), so a watch with
// timeoutSeconds=3 sees bookmarks at about 1 s and 2 s before closing at
// 3 s. Those pre-deadline bookmarks are the testable assertion.
func bookmarkSpecs(v variant, e *env) {
	Describe("bookmarks", func() {
		v.itFakeDiffers("the fake sends bookmarks only every Options.BookmarkInterval (1 min), none before a watch's timeoutSeconds deadline",
			"a watch with allowWatchBookmarks and timeoutSeconds=3 gets bookmarks before the server closes it", func(ctx SpecContext) {
				w := e.watch(ctx, metav1.ListOptions{ResourceVersion: e.list(ctx, metav1.ListOptions{}).ResourceVersion, AllowWatchBookmarks: true, TimeoutSeconds: ptr.To[int64](3)})
				written := e.create(ctx, "a", nil)
				start := time.Now()
				evs := drain(w, eventTimeout)
				Expect(time.Since(start)).To(BeNumerically("<", 8*time.Second), "closed at the 3 s timeout")
				Expect(describe(evs[0])).To(Equal("ADDED " + at(written)))
				Expect(len(evs)).To(BeNumerically(">=", 2), "at least one bookmark")
				for _, ev := range evs[1:] {
					expectBookmark(ev, written.ResourceVersion)
				}
			})

		v.it("a watch without allowWatchBookmarks gets no bookmark and is closed cleanly at timeoutSeconds", func(ctx SpecContext) {
			w := e.watch(ctx, metav1.ListOptions{ResourceVersion: e.list(ctx, metav1.ListOptions{}).ResourceVersion, TimeoutSeconds: ptr.To[int64](1)})
			written := e.create(ctx, "a", nil)
			evs := drain(w, eventTimeout)
			got := make([]string, len(evs))
			for i, ev := range evs {
				got[i] = describe(ev)
			}
			Expect(got).To(Equal([]string{"ADDED " + at(written)}))
		})
	})
}

// expectBookmark checks a plain bookmark: an empty ConfigMap but for a
// resourceVersion not older than minRV.
func expectBookmark(ev watch.Event, minRV string) {
	GinkgoHelper()
	Expect(ev.Type).To(Equal(watch.Bookmark))
	bm, ok := ev.Object.(*corev1.ConfigMap)
	Expect(ok).To(BeTrue(), "bookmark object %T", ev.Object)
	Expect(rv(bm.ResourceVersion)).To(BeNumerically(">=", rv(minRV)))
	bm.ResourceVersion = ""
	Expect(bm).To(Equal(&corev1.ConfigMap{}), "a bookmark has only a resourceVersion")
}
