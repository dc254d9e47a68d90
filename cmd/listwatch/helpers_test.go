package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// result is one run of the command line.
type result struct {
	code           int
	stdout, stderr string
}

func runArgs(ctx context.Context, args ...string) result {
	var out, errOut bytes.Buffer
	code := run(ctx, args, &out, &errOut)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// writeKubeconfig writes a kubeconfig for cfg (bearer token, CA data) with
// namespace as the context's namespace, and returns its path.
func writeKubeconfig(t *testing.T, cfg *rest.Config, namespace string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "user", Namespace: namespace}
	kc.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// lockedBuffer is a bytes.Buffer safe for a command writing while a test
// reads.
type lockedBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor polls until the output contains s or timeout passes: for tests
// against a real apiserver, where virtual time cannot be used.
func (b *lockedBuffer) waitFor(s string, timeout time.Duration) bool {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(b.String(), s) {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}
