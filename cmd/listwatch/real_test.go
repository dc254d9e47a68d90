package main

import (
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// Both commands against a real kube-apiserver (skipped under -short): one
// server for all the cases, each case in its own namespace.
func TestAgainstRealAPIServer(t *testing.T) {
	ctx := t.Context()
	srv, err := testapiserver.Start(ctx, t, testapiserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	admin := writeKubeconfig(t, srv.AdminConfig(), "default")
	user := writeKubeconfig(t, srv.UnprivilegedConfig(), "default")

	t.Run("watch prints the list then live changes", func(t *testing.T) { testRealWatch(t, cs, admin) })
	t.Run("watch resolves short names and groups", func(t *testing.T) {
		r := runArgs(ctx, "watch", "deploy", "-A", "--metadata", "--watch-only", "--duration", "2s", "--kubeconfig", admin)
		if r.code != 0 || r.stdout != "EVENT            NAMESPACE            NAME                                     RESOURCEVERSION  AGE\n" {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		r = runArgs(ctx, "watch", "bogus", "--kubeconfig", admin)
		if r.code != 1 || !strings.Contains(r.stderr, `error: the server doesn't have a resource type "bogus"`) {
			t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
		}
	})
	t.Run("watch without RBAC fails with forbidden", func(t *testing.T) {
		r := runArgs(ctx, "watch", "cm", "--kubeconfig", user)
		if r.code != 1 || !strings.Contains(r.stderr, "error: cannot list configmaps: ") || !strings.Contains(r.stderr, "forbidden") {
			t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
		}
	})
	t.Run("demo in a namespace of its own", func(t *testing.T) { testRealDemo(t, cs, admin) })
}

func testRealWatch(t *testing.T, cs kubernetes.Interface, kubeconfig string) {
	ctx := t.Context()
	ns := createNamespace(t, cs, "watch")
	createCM(t, cs, ns, "before")
	var out, errOut lockedBuffer
	var code int
	var wg sync.WaitGroup
	wg.Go(func() {
		code = run(ctx, []string{"watch", "configmaps", "-n", ns, "--duration", "4s", "--kubeconfig", kubeconfig}, &out, &errOut)
	})
	if !errOut.waitFor("synced", 30*time.Second) {
		t.Fatalf("no sync; stderr:\n%s", errOut.String())
	}
	createCM(t, cs, ns, "during")
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "before", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	r := result{code: code, stdout: out.String(), stderr: errOut.String()}
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	var events []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
		f := strings.Fields(line)
		events = append(events, f[0]+" "+f[1])
	}
	// kube-root-ca.crt is published into every namespace by the
	// controller manager, which this test server does not run.
	if got, want := strings.Join(events, ", "), "ADDED before, ADDED during, DELETED before"; got != want {
		t.Fatalf("events %q, want %q\nstdout:\n%s", got, want, r.stdout)
	}
	if !strings.Contains(r.stderr, "synced 1 configmaps") || !strings.Contains(r.stderr, "final: 1 configmaps cached") {
		t.Fatalf("stderr:\n%s", r.stderr)
	}
}

func testRealDemo(t *testing.T, cs kubernetes.Interface, kubeconfig string) {
	ctx := t.Context()
	r := runArgs(ctx, "demo", "--kubeconfig", kubeconfig, "-n", "lw-demo-test", "--duration", "5s", "--objects", "20", "--rate", "10")
	if r.code != 0 || !strings.Contains(r.stdout, "cache equals server: OK") || !strings.Contains(r.stdout, "deleted namespace lw-demo-test") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("demo output:\n%s", r.stdout)
	got, err := cs.CoreV1().Namespaces().Get(ctx, "lw-demo-test", metav1.GetOptions{})
	if err == nil && got.DeletionTimestamp == nil {
		t.Fatal("the demo's namespace was not deleted")
	} else if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	// A namespace the demo did not create is refused, and left alone.
	r = runArgs(ctx, "demo", "--kubeconfig", kubeconfig, "-n", "default", "--duration", "1s")
	if r.code != 1 || !strings.Contains(r.stderr, `namespace "default" already exists`) {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

func createNamespace(t *testing.T, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func createCM(t *testing.T, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	_, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}
