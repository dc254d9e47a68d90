package scope_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/internal/testing/testapiserver"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/scope"
)

// TestRealServer runs the scope changes against kube-apiserver: gaining
// namespaces lists them alone (one list per namespace, their objects
// only) and adds exactly their objects; losing them makes no list and
// deletes exactly their objects with the final state known; under churn
// the cache ends equal to a fresh informer's of the final scope, and the
// handler's calls replay to it. A user who may not list a namespace (403)
// gets the error from Update and keeps the old scope whole. Then the
// property tests of realprop_test.go: random scopes under churn
// (randomScopes) and Fresh under churn (freshUnderChurn). Skipped under
// -short.
func TestRealServer(t *testing.T) {
	srv, err := testapiserver.Start(t.Context(), t, testapiserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	admin := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	ctx := t.Context()
	nss := append(namespaces(0, 6), "secret")
	var keys []string
	written := "" // the resource version of the test's last write
	for _, ns := range nss {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i), Labels: map[string]string{"tier": []string{"even", "odd"}[i%2]}}}
			made, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, ns+"/"+cm.Name)
			written = made.ResourceVersion
		}
	}
	grantLists(t, admin, namespaces(0, 6))
	// The unprivileged user may list ConfigMaps in n0-n5 (not in secret, nor every
	// namespace at once) and watch them everywhere.
	user := kubernetes.NewForConfigOrDie(srv.UnprivilegedConfig())
	of := func(cs kubernetes.Interface) func(string) cache.ListerWatcherWithContext {
		return func(ns string) cache.ListerWatcherWithContext {
			return reflector.FromClient(cs.CoreV1().ConfigMaps(ns))
		}
	}

	t.Run("gain and lose", func(t *testing.T) {
		before := scope.Scope{Namespaces: namespaces(0, 3)}
		h := startWith(t, of(admin), before)
		defer h.stop()
		realSettle(t, h, written)
		h.rec.await(t, ctx, atLeast(90))
		if got, want := h.rec.take(), prefixed("add", keysIn(keys, before.Namespaces...)); !slices.Equal(got, want) {
			t.Fatalf("initial sync: calls %v, want %v", got, want)
		}
		st0 := h.src.Stats()
		after := scope.Scope{Namespaces: namespaces(0, 5)}
		if err := h.src.Update(ctx, after); err != nil {
			t.Fatal(err)
		}
		realSettle(t, h, written)
		st1 := h.src.Stats()
		if lists, objs := st1.Lists-st0.Lists, st1.ListedObjects-st0.ListedObjects; lists != 2 || objs != 60 {
			t.Fatalf("adding n3, n4: %d list requests and %d objects listed, want 2 and 60", lists, objs)
		}
		h.rec.await(t, ctx, atLeast(60))
		if got, want := h.rec.take(), prefixed("add", keysIn(keys, "n3", "n4")); !slices.Equal(got, want) {
			t.Fatalf("adding n3, n4: calls %v, want %v", got, want)
		}
		if got, want := cached(h.inf), realFresh(t, of(admin), after, written); !maps.Equal(got, want) {
			t.Fatalf("after adding: cache %v, want %v", sortedKeys(got), sortedKeys(want))
		}
		if err := h.src.Update(ctx, before); err != nil {
			t.Fatal(err)
		}
		realSettle(t, h, written)
		if st2 := h.src.Stats(); st2.Lists != st1.Lists {
			t.Fatalf("removing n3, n4 made %d list requests, want none", st2.Lists-st1.Lists)
		}
		h.rec.await(t, ctx, atLeast(60))
		if got, want := h.rec.take(), prefixed("delete", keysIn(keys, "n3", "n4")); !slices.Equal(got, want) {
			t.Fatalf("removing n3, n4: calls %v, want %v", got, want)
		}
		if got, want := cached(h.inf), realFresh(t, of(admin), before, written); !maps.Equal(got, want) {
			t.Fatalf("after removing: cache %v, want %v", sortedKeys(got), sortedKeys(want))
		}
		t.Logf("adding 2 namespaces of 30: %d list requests, %d objects listed; removing them: 0 list requests",
			st1.Lists-st0.Lists, st1.ListedObjects-st0.ListedObjects)
	})

	t.Run("forbidden namespace", func(t *testing.T) {
		old := scope.Scope{Namespaces: []string{"n0", "n1"}}
		h := startWith(t, of(user), old)
		defer h.stop()
		realSettle(t, h, written)
		h.rec.await(t, ctx, atLeast(60))
		h.rec.take()
		before := cached(h.inf)
		err := h.src.Update(ctx, scope.Scope{Namespaces: []string{"n0", "n1", "n2", "secret"}})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("Update with a namespace the user may not list = %v, want 403", err)
		}
		t.Logf("refused: %v", err)
		realSettle(t, h, written)
		if got := h.rec.take(); len(got) != 0 {
			t.Fatalf("a refused scope told handlers %v", got)
		}
		if got := cached(h.inf); !maps.Equal(got, before) {
			t.Fatalf("cache %v, want the old scope's %v", sortedKeys(got), sortedKeys(before))
		}
		if st := h.src.Status(); !st.Scope.Equal(old) || !apierrors.IsForbidden(st.LastError) {
			t.Fatalf("status %+v, want the old scope and the 403", st)
		}
		if err := h.src.Update(ctx, scope.Scope{Namespaces: []string{"n0", "n1", "n2"}}); err != nil {
			t.Fatal(err)
		}
		realSettle(t, h, written)
		h.rec.await(t, ctx, atLeast(30))
		if got, want := h.rec.take(), prefixed("add", keysIn(keys, "n2")); !slices.Equal(got, want) {
			t.Fatalf("then adding n2: calls %v, want %v", got, want)
		}
	})
	t.Run("under churn", func(t *testing.T) {
		h := startWith(t, of(admin), scope.Scope{Namespaces: []string{"n0", "n1"}})
		defer h.stop()
		cctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { written = churnReal(cctx, admin, namespaces(0, 6), written) })
		steps := []scope.Scope{
			{Namespaces: []string{"n0", "n1", "n2", "n3"}},
			{Namespaces: []string{"n1", "n3"}},
			{Namespaces: []string{"n1", "n3"}, LabelSelector: "tier=even"},
			{Namespaces: []string{"n0", "n1", "n3", "n5"}, LabelSelector: "tier=even"},
			{Namespaces: []string{"n2", "n4", "n5"}},
		}
		for _, sc := range steps {
			if err := h.src.Update(ctx, sc); err != nil {
				t.Fatalf("Update(%v): %v", sc, err)
			}
		}
		cancel()
		wg.Wait()
		// A write of the churn whose answer its cancelled context lost
		// may still have landed: a last write in the final scope, after
		// every one of them, is the barrier both informers wait for.
		last, err := admin.CoreV1().ConfigMaps("n2").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "sentinel"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		written = last.ResourceVersion
		realSettle(t, h, written)
		want := realFresh(t, of(admin), steps[len(steps)-1], written)
		if got := cached(h.inf); !maps.Equal(got, want) {
			t.Fatalf("cache %v, want %v", sortedKeys(got), sortedKeys(want))
		}
		wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
		defer wcancel()
		var bad error
		h.rec.await(t, wctx, func(calls []string) bool {
			got, err := replayed(calls)
			bad = err
			return err != nil || slices.Equal(got, sortedKeys(want))
		})
		if bad != nil {
			t.Fatal(bad)
		}
	})
	t.Run("random scopes under churn", func(t *testing.T) { randomScopes(t, admin, user, of) })
	t.Run("fresh under churn", func(t *testing.T) { freshUnderChurn(t, admin, of) })
}

// realSettle waits until h's informer has applied the test's writes up to
// resource version rv (its handler's calls may still be on their way: the
// tests await them). Not the server's current resource version: that
// counts every resource's writes, which a ConfigMap informer learns of
// only from a bookmark, about once a minute.
func realSettle(t *testing.T, h *harness, rv string) {
	t.Helper()
	if err := h.inf.WaitForResourceVersion(t.Context(), rv); err != nil {
		t.Fatal(err)
	}
	if err := h.inf.WaitForQueued(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// realFresh returns what a fresh informer of sc caches once it has
// applied the test's writes up to rv.
func realFresh(t *testing.T, inner func(string) cache.ListerWatcherWithContext, sc scope.Scope, rv string) map[string]string {
	t.Helper()
	h := startWith(t, inner, sc)
	defer h.stop()
	realSettle(t, h, rv)
	return cached(h.inf)
}

// churnReal updates, deletes and recreates ConfigMaps in nss, flipping
// their tier label, until ctx ends, and returns the resource version of
// its last write (last when it made none).
func churnReal(ctx context.Context, cs kubernetes.Interface, nss []string, last string) string {
	for i := 0; ctx.Err() == nil; i++ {
		ns := nss[i%len(nss)]
		name := fmt.Sprintf("cm-%03d", (i*7)%30)
		cms := cs.CoreV1().ConfigMaps(ns)
		var made *corev1.ConfigMap
		var err error
		switch i % 5 {
		case 0:
			if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				continue
			}
			// A deletion's resource version is not returned: the
			// re-creation's follows it (one made with a context that
			// ended meanwhile is not, and the fresh informer then
			// differs from the server by nothing the test knows of).
			made, err = cms.Create(context.WithoutCancel(ctx), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tier": "odd"}}}, metav1.CreateOptions{})
		default:
			cm, gerr := cms.Get(ctx, name, metav1.GetOptions{})
			if gerr != nil {
				continue
			}
			cm.Labels = map[string]string{"tier": []string{"even", "odd"}[i%2]}
			made, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		}
		if err == nil {
			last = made.ResourceVersion
		}
	}
	return last
}

// grantLists lets testapiserver.UnprivilegedUser watch ConfigMaps in every
// namespace (a scope of several namespaces is watched cluster-wide) and
// list them in nss only.
func grantLists(t *testing.T, admin kubernetes.Interface, nss []string) {
	t.Helper()
	ctx := t.Context()
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cm-watch"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"watch"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cm-list"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	user := rbacv1.Subject{Kind: rbacv1.UserKind, Name: testapiserver.UnprivilegedUser}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "cm-watch"},
		Subjects: []rbacv1.Subject{user}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cm-watch"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, ns := range nss {
		if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "cm-list"},
			Subjects: []rbacv1.Subject{user}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cm-list"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
