package e2e

import (
	"context"
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/internal/testing/testapiserver"
	"github.com/listwatch/listwatch/reflector"
)

// forbiddenWindow is how long the request rate of a forbidden informer is
// watched; it is the scenario's duration, not a synchronisation.
const forbiddenWindow = 10 * time.Second

var _ = Describe("Informers without RBAC permission", func() {
	It("say forbidden, do not hot-loop, and sync once a Role is granted", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		admin := adminClient()
		createConfigMaps(ctx, admin, ns, "cm", 50, 4)
		lw, cg := startBoth(server.UnprivilegedConfig(), ns)

		// listwatch says why it has not synced.
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := lw.inf.WaitForSync(wctx)
		cancel()
		var notSynced *informer.NotSyncedError
		Expect(errors.As(err, &notSynced)).To(BeTrue(), "WaitForSync: %v", err)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "WaitForSync: %v", err)
		Expect(errors.Is(err, context.DeadlineExceeded)).To(BeTrue())
		Expect(notSynced.Status.Reason).To(Equal(reflector.ReasonForbidden))
		Expect(lw.inf.Status().Reason).To(Equal(reflector.ReasonForbidden))
		GinkgoWriter.Printf("listwatch WaitForSync: %v\n", err)
		// client-go only reports it through the watch error handler.
		Expect(cg.synced()).To(BeFalse())
		Eventually(cg.lastError).Should(Satisfy(apierrors.IsForbidden))

		// No hot loop: count requests over a fixed window.
		before := map[side]int64{lw: lw.requests().total.Load(), cg: cg.requests().total.Load()}
		inWindow := func() []int64 {
			return []int64{lw.requests().total.Load() - before[lw], cg.requests().total.Load() - before[cg]}
		}
		Consistently(inWindow).WithTimeout(forbiddenWindow).WithPolling(100*time.Millisecond).
			Should(HaveEach(BeNumerically("<=", 10)), "requests while forbidden (listwatch, client-go)")
		window := inWindow()

		// Grant list and watch on ConfigMaps in ns; both recover by themselves.
		grant(ctx, ns)
		t0 := time.Now()
		recovered := map[side]time.Duration{}
		Eventually(func() int {
			for _, s := range []side{lw, cg} {
				if _, ok := recovered[s]; !ok && s.synced() {
					recovered[s] = time.Since(t0)
				}
			}
			return len(recovered)
		}).WithTimeout(2 * time.Minute).WithPolling(50 * time.Millisecond).Should(Equal(2))
		awaitConverged(ctx, admin, ns, time.Minute, lw, cg)
		Expect(lw.inf.Status().Reason).To(Equal(reflector.ReasonNone))
		for i, s := range []side{lw, cg} {
			record("403 then RBAC grant", s, recovered[s], fmt.Sprintf(
				"%d reqs in a %v window while forbidden, %d 403s in all; time: grant to synced",
				window[i], forbiddenWindow, s.requests().forbidden.Load()))
		}
	})
})

// grant creates a Role allowing get, list and watch on ConfigMaps in ns and
// binds it to the unprivileged user.
func grant(ctx context.Context, ns string) {
	GinkgoHelper()
	rbac := adminClient().RbacV1()
	_, err := rbac.Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "configmap-reader"},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"},
		}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	_, err = rbac.RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "configmap-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "configmap-reader"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: testapiserver.UnprivilegedUser}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
}
