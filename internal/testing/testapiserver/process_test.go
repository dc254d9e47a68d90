//go:build linux

package testapiserver

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shProcess returns a process that runs script under /bin/sh with its log
// in a temporary directory.
func shProcess(t *testing.T, script string) *process {
	t.Helper()
	return &process{name: "sh", bin: "/bin/sh", args: []string{"-c", script}, logPath: filepath.Join(t.TempDir(), "sh.log")}
}

func TestProcessKillReachesWholeGroup(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The shell opens the FIFO for writing and forks a sleep that inherits
	// that descriptor. Reading the FIFO reaches EOF only once every writer,
	// the grandchild included, is dead.
	p := shProcess(t, `exec 3>"$0"; sleep 1000 & wait`)
	p.args = append(p.args, fifo)
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	r, err := os.Open(fifo) // rendezvous with the shell's open
	if err != nil {
		p.kill()
		t.Fatal(err)
	}
	defer r.Close()
	p.kill()
	if err := r.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(r); err != nil {
		t.Fatalf("the forked grandchild survived the group kill: %v", err)
	}
	if p.cmd != nil || p.exited != nil {
		t.Error("kill must leave the process stopped")
	}
}

func TestProcessExitedEarlyReportsStatusAndLog(t *testing.T) {
	p := shProcess(t, "echo first line; echo boom >&2; exit 3")
	if err := p.exitedErr(); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Fatalf("exitedErr before start = %v, want not running", err)
	}
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	err := p.exitedErr()
	if !errors.Is(err, errExitedEarly) {
		t.Fatalf("exitedErr after exit = %v, want errExitedEarly", err)
	}
	for _, want := range []string{"sh exited early", "exit status 3", "first line\nboom"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("exitedErr = %q, want it to contain %q", err, want)
		}
	}
	p.kill()
}

func TestProcessRestartAppendsToLog(t *testing.T) {
	p := shProcess(t, "echo run")
	for range 2 {
		if err := p.start(); err != nil {
			t.Fatal(err)
		}
		<-p.exited
		p.kill()
	}
	if got := p.logTail(10); got != "run\nrun" {
		t.Errorf("log after two runs = %q, want %q", got, "run\nrun")
	}
}

func TestProcessStartTwiceFails(t *testing.T) {
	p := shProcess(t, "exec sleep 1000")
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	defer p.kill()
	if err := p.start(); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("second start = %v, want already running", err)
	}
	if err := p.exitedErr(); err != nil {
		t.Fatalf("running process reported %v", err)
	}
}

func TestProcessMissingBinary(t *testing.T) {
	p := &process{name: "nope", bin: "/nonexistent/nope", logPath: filepath.Join(t.TempDir(), "nope.log")}
	if err := p.start(); err == nil || !strings.Contains(err.Error(), "starting nope") {
		t.Fatalf("start = %v, want a start error", err)
	}
}

func TestLogTail(t *testing.T) {
	p := &process{logPath: filepath.Join(t.TempDir(), "x.log")}
	if got := p.logTail(2); !strings.HasPrefix(got, "(no log:") {
		t.Errorf("logTail of missing file = %q", got)
	}
	if err := os.WriteFile(p.logPath, []byte("a\nb\nc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := p.logTail(2); got != "b\nc" {
		t.Errorf("logTail(2) = %q, want %q", got, "b\nc")
	}
}
