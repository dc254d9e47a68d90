//go:build linux

package testapiserver

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeGo stands in for the go command: "env" prints a version, OS and
// arch; "build" writes a tiny executable to its -o path and logs one line
// to $FAKE_GO_LOG, so a test can count real builds without compiling.
const fakeGo = `#!/bin/sh
case "$1" in
env) printf 'go-fake\nlinux\namd64\n' ;;
build)
	while [ $# -gt 0 ]; do
		[ "$1" = -o ] && out=$2
		shift
	done
	printf '#!/bin/sh\necho fake %s\n' "$(basename "$out")" >"$out"
	chmod +x "$out"
	echo "$(basename "$out")" >>"$FAKE_GO_LOG"
	;;
*) exit 2 ;;
esac
`

// buildScriptCmd returns a command running hack/build-apiserver.sh with the
// fake go and a private cache directory.
func buildScriptCmd(t *testing.T, cache, goBin, log string) *exec.Cmd {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(root, "hack", "build-apiserver.sh"))
	cmd.Env = append(os.Environ(), "GO="+goBin, "LISTWATCH_BIN_CACHE="+cache, "FAKE_GO_LOG="+log)
	cmd.Stderr = &bytes.Buffer{}
	return cmd
}

func TestBuildScriptBuildsOnceAndCaches(t *testing.T) {
	dir := t.TempDir()
	goBin, cache, log := filepath.Join(dir, "go"), filepath.Join(dir, "cache"), filepath.Join(dir, "builds.log")
	if err := os.WriteFile(goBin, []byte(fakeGo), 0o700); err != nil {
		t.Fatal(err)
	}

	// Two concurrent first runs: the lock lets exactly one of them build.
	var outs [2]bytes.Buffer
	cmds := make([]*exec.Cmd, 2)
	for i := range cmds {
		cmds[i] = buildScriptCmd(t, cache, goBin, log)
		cmds[i].Stdout = &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("build script: %v\n%s", err, cmd.Stderr)
		}
	}
	first := strings.TrimSpace(outs[0].String())
	if second := strings.TrimSpace(outs[1].String()); first != second || !strings.HasPrefix(first, cache+"/") {
		t.Fatalf("concurrent runs printed %q and %q, want the same directory under %s", first, second, cache)
	}
	assertBuilds(t, log, "etcd\nkube-apiserver")

	// A third run finds the stamp and builds nothing.
	again, err := buildScriptCmd(t, cache, goBin, log).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(again)); got != first {
		t.Errorf("cached run printed %q, want %q", got, first)
	}
	assertBuilds(t, log, "etcd\nkube-apiserver")
	if _, err := findBinaries(t.Context(), first); err != nil {
		t.Errorf("the script's directory does not satisfy findBinaries: %v", err)
	}
}

// assertBuilds checks the fake go's build log.
func assertBuilds(t *testing.T, log, want string) {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(data)); got != want {
		t.Errorf("builds = %q, want %q", got, want)
	}
}
