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
// 3 s. Those pre-deadline bookmarks are the testable assertion. A new
// watch that allows bookmarks may also get one as soon as the watch cache's
// resource version (moved by etcd progress notifications, i.e. by writes to
// any type) passes the watch's position, even right after its initial
// events; specs that allow bookmarks therefore never assume where plain
// bookmarks fall.
func bookmarkSpecs(v variant, e *env) {
	Describe("bookmarks", func() {
		v.it("a watch with allowWatchBookmarks and timeoutSeconds=3 gets bookmarks before the server closes it", func(ctx SpecContext) {
			from := e.list(ctx, metav1.ListOptions{}).ResourceVersion
			w := e.watch(ctx, metav1.ListOptions{ResourceVersion: from, AllowWatchBookmarks: true, TimeoutSeconds: ptr.To[int64](3)})
			written := e.create(ctx, "a", nil)
			start := time.Now()
			evs := drain(w, eventTimeout)
			Expect(time.Since(start)).To(BeNumerically("<", 8*time.Second), "closed at the 3 s timeout")
			var others []string
			var bookmarks []watch.Event
			for _, ev := range evs {
				if ev.Type == watch.Bookmark {
					expectBookmark(ev, from)
					bookmarks = append(bookmarks, ev)
				} else {
					others = append(others, describe(ev))
				}
			}
			Expect(others).To(Equal([]string{"ADDED " + at(written)}))
			Expect(bookmarks).NotTo(BeEmpty(), "at least one bookmark before the deadline")
			last := bookmarks[len(bookmarks)-1].Object.(*corev1.ConfigMap)
			Expect(rv(last.ResourceVersion)).To(BeNumerically(">=", rv(written.ResourceVersion)), "the last bookmark is past the last event")
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
	bm = bm.DeepCopy() // checked destructively below
	Expect(rv(bm.ResourceVersion)).To(BeNumerically(">=", rv(minRV)))
	bm.ResourceVersion = ""
	Expect(bm).To(Equal(&corev1.ConfigMap{}), "a bookmark has only a resourceVersion")
}
