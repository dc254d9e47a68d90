package testapiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// binDirEnv names the environment variable that points at a directory with
// prebuilt kube-apiserver and etcd binaries, skipping the build script.
const binDirEnv = "LISTWATCH_APISERVER_BIN_DIR"

// findBinaries returns the directory holding kube-apiserver and etcd: the
// explicit one, the one named by $LISTWATCH_APISERVER_BIN_DIR, or the one
// hack/build-apiserver.sh prints (building the binaries if needed).
func findBinaries(ctx context.Context, explicit string) (string, error) {
	dir := explicit
	if dir == "" {
		dir = os.Getenv(binDirEnv)
	}
	if dir == "" {
		var err error
		if dir, err = runBuildScript(ctx); err != nil {
			return "", err
		}
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return "", fmt.Errorf("testapiserver: %s binary: %w", name, err)
		}
		if info.Mode()&0o111 == 0 {
			return "", fmt.Errorf("testapiserver: %s in %s is not executable", name, dir)
		}
	}
	return dir, nil
}

// runBuildScript runs hack/build-apiserver.sh from the enclosing listwatch
// checkout and returns the directory it prints.
func runBuildScript(ctx context.Context) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "build-apiserver.sh"))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("testapiserver: hack/build-apiserver.sh: %w\n%s", err, stderr.String())
	}
	dir := strings.TrimSpace(stdout.String())
	if dir == "" {
		return "", errors.New("testapiserver: hack/build-apiserver.sh printed no directory")
	}
	return dir, nil
}

// repoRoot walks up from the working directory (a package directory under
// go test) to the directory that holds hack/build-apiserver.sh.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("testapiserver: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "build-apiserver.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("testapiserver: no hack/build-apiserver.sh above the working directory; set %s or Options.BinDir", binDirEnv)
		}
		dir = parent
	}
}
