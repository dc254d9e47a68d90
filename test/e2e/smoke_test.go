package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

var _ = Describe("Smoke", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
	})

	It("creates, lists and watch-lists a ConfigMap", func(ctx SpecContext) {
		client := adminClient()
		created, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "smoke"},
			Data:       map[string]string{"hello": "world"},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		list, err := client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(list.Items).To(HaveLen(1))
		Expect(list.Items[0].UID).To(Equal(created.UID))
		Expect(list.Items[0].Data).To(Equal(map[string]string{"hello": "world"}))

		w, err := client.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{
			AllowWatchBookmarks:  true,
			SendInitialEvents:    ptr.To(true),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.Stop)

		var ev watch.Event
		Eventually(w.ResultChan()).WithTimeout(30 * time.Second).Should(Receive(&ev))
		Expect(ev.Type).To(Equal(watch.Added), "the initial events come first")
		Expect(ev.Object.(*corev1.ConfigMap).UID).To(Equal(created.UID))

		Eventually(w.ResultChan()).WithTimeout(30 * time.Second).Should(Receive(&ev))
		Expect(ev.Type).To(Equal(watch.Bookmark), "a bookmark ends the initial events")
		bookmark := ev.Object.(*corev1.ConfigMap)
		Expect(bookmark.Annotations).To(HaveKeyWithValue(metav1.InitialEventsAnnotationKey, "true"))
		Expect(bookmark.ResourceVersion).NotTo(BeEmpty())
	})

	It("forbids the unprivileged user to list ConfigMaps", func(ctx SpecContext) {
		_, err := unprivilegedClient().CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want 403 Forbidden, got %v", err)
	})
})
