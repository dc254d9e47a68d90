package testapiserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindBinariesExplicitDir(t *testing.T) {
	dir := t.TempDir()
	if _, err := findBinaries(t.Context(), dir); err == nil || !strings.Contains(err.Error(), "kube-apiserver binary") {
		t.Fatalf("empty dir: err = %v, want missing kube-apiserver", err)
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := findBinaries(t.Context(), dir); err == nil || !strings.Contains(err.Error(), "not executable") {
		t.Fatalf("non-executable files: err = %v, want not executable", err)
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if err := os.Chmod(filepath.Join(dir, name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	got, err := findBinaries(t.Context(), dir)
	if err != nil || got != dir {
		t.Fatalf("findBinaries = %q, %v; want %q", got, err, dir)
	}
}

func TestFindBinariesEnvOverride(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	t.Setenv(binDirEnv, dir)
	if _, err := findBinaries(t.Context(), ""); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("err = %v, want it to name %s", err, dir)
	}
}

func TestRepoRootFindsBuildScript(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "hack", "tools", "go.mod")); err != nil {
		t.Errorf("repoRoot %s has no hack/tools/go.mod: %v", root, err)
	}
}
