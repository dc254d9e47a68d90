package testapiserver

import (
	"context"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// startServer starts a server for the test or fails it.
func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	srv, err := Start(t.Context(), t, opts)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// newNamespace creates a namespace with a generated name and returns it.
func newNamespace(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	ns, err := client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "lw-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// whoAmI returns the user the apiserver sees behind client.
func whoAmI(t *testing.T, client kubernetes.Interface) authenticationv1.UserInfo {
	t.Helper()
	review, err := client.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return review.Status.UserInfo
}

func TestServerIdentitiesAndRBAC(t *testing.T) {
	srv := startServer(t, Options{})
	admin := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	user := kubernetes.NewForConfigOrDie(srv.UnprivilegedConfig())

	version, err := admin.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(version.GitVersion, "v1.36.") {
		t.Errorf("server version %q, want v1.36.x", version.GitVersion)
	}
	if got := whoAmI(t, admin); got.Username != AdminUser || !contains(got.Groups, "system:masters") {
		t.Errorf("admin identity = %+v, want %s in system:masters", got, AdminUser)
	}
	if got := whoAmI(t, user); got.Username != UnprivilegedUser || contains(got.Groups, "system:masters") {
		t.Errorf("unprivileged identity = %+v, want %s outside system:masters", got, UnprivilegedUser)
	}

	ns := newNamespace(t, admin)
	_, err = user.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("unprivileged list = %v, want 403 Forbidden", err)
	}
	if tm := srv.Timings(); tm.EtcdReady <= 0 || tm.APIServerReady <= 0 {
		t.Errorf("timings not recorded: %+v", tm)
	}
	if !strings.HasPrefix(srv.URL(), "https://127.0.0.1:") || !strings.HasPrefix(srv.EtcdURL(), "http://127.0.0.1:") {
		t.Errorf("URLs must be loopback: %s %s", srv.URL(), srv.EtcdURL())
	}
}

func TestServerKillRestartKeepsDataAndConfigs(t *testing.T) {
	srv := startServer(t, Options{})
	admin := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	ns := newNamespace(t, admin)
	cm, err := admin.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "survivor"}, Data: map[string]string{"k": "v"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Discovery().ServerVersion(); err == nil {
		t.Fatal("a killed apiserver still answered")
	}
	if err := srv.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-apiserver restart to ready: %v", srv.Timings().APIServerReady)
	got, err := admin.CoreV1().ConfigMaps(ns).Get(t.Context(), "survivor", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get after restart with the old config: %v", err)
	}
	if got.ResourceVersion != cm.ResourceVersion || got.UID != cm.UID {
		t.Errorf("after restart got rv=%s uid=%s, want rv=%s uid=%s", got.ResourceVersion, got.UID, cm.ResourceVersion, cm.UID)
	}

	if err := srv.RestartEtcd(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd restart to healthy: %v", srv.Timings().EtcdReady)
	// The apiserver reconnects to etcd with its own backoff; give it a
	// bounded time to serve a write again.
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-etcd-restart"}}, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), nil
	})
	if err != nil {
		t.Fatalf("no write succeeded after the etcd restart: %v", err)
	}

	srv.Stop()
	srv.Stop() // idempotent
	if err := srv.Restart(t.Context()); err != errStopped {
		t.Errorf("Restart after Stop = %v, want %v", err, errStopped)
	}
	if err := srv.Kill(); err != errStopped {
		t.Errorf("Kill after Stop = %v, want %v", err, errStopped)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestStartReportsABadFlagWithTheLog(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the apiserver binaries")
	}
	srv, err := Start(t.Context(), t, Options{ExtraAPIServerArgs: []string{"--no-such-flag"}})
	if err == nil {
		t.Fatalf("Start with an unknown flag succeeded at %s", srv.URL())
	}
	for _, want := range []string{"kube-apiserver exited early", "unknown flag: --no-such-flag"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start error does not contain %q:\n%v", want, err)
		}
	}
}
