// Package testproc runs the processes of multi-process tests (replicas of
// a sharded controller on a real kube-apiserver): it builds a command,
// starts it with its standard output read line by line and its standard
// error written to a file, and ends it with SIGKILL or SIGTERM.
//
// # Usage
//
//	bin := testproc.Build(t, "github.com/listwatch/listwatch/examples/sharded/replica")
//	p := testproc.Start(t, "r0", t.TempDir(), exec.Command(bin, args...), func(line []byte) { ... })
//	p.Kill()              // kill -9
//	err := p.Stop(time.Minute) // SIGTERM, then wait for the exit
//
// # Concurrency
//
// The line callback runs on one goroutine per process, in the order of
// the lines; it ends before Kill and Stop return. A Proc's methods are
// for the test's goroutine.
//
// # Testing
//
// Exercised by the tests that use it: examples/sharded's
// TestReplicaProcesses and examples/crsharded's TestManagerProcesses.
package testproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Build builds the main package pkg (without -race) into a temporary
// directory and returns the binary's path; it skips the test when there
// is no go command.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build %s: %v", pkg, err)
	}
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	start := time.Now()
	if out, err := exec.Command(goBin, "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	t.Logf("built %s in %v", filepath.Base(pkg), time.Since(start).Round(100*time.Millisecond))
	return bin
}

// Proc is one started process.
type Proc struct {
	// ID names it in messages.
	ID string
	// Started is when it was started.
	Started time.Time
	cmd     *exec.Cmd
	// read is closed once its standard output is read to the end.
	read chan struct{}
	// log is the file of its standard error.
	log string
	// exited is closed once cmd.Wait has returned exitErr.
	exited  chan struct{}
	exitErr error
}

// Start starts cmd as process id, its standard error written to
// dir/id.log, each line of its standard output handed to line. When the
// test ends the process is killed and, if the test failed, the end of its
// standard error is logged.
func Start(t testing.TB, id, dir string, cmd *exec.Cmd, line func([]byte)) *Proc {
	t.Helper()
	p := &Proc{ID: id, Started: time.Now(), cmd: cmd, read: make(chan struct{}), exited: make(chan struct{}),
		log: filepath.Join(dir, id+".log")}
	stderr, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.read)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line(sc.Bytes())
		}
	}()
	go func() {
		defer close(p.exited)
		<-p.read // Wait closes the pipe: read it to the end first
		p.exitErr = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.wait()
		if t.Failed() {
			if b, err := os.ReadFile(p.log); err == nil && len(b) > 0 {
				t.Logf("%s stderr (last 2 KB):\n%s", id, b[max(0, len(b)-2048):])
			}
		}
	})
	return p
}

// Exited is closed once the process's standard output is closed: it has
// exited (or closed it).
func (p *Proc) Exited() <-chan struct{} { return p.read }

// wait waits for the output to be read and the process to exit.
func (p *Proc) wait() error {
	<-p.exited
	return p.exitErr
}

// Kill ends the process with SIGKILL and waits for it.
func (p *Proc) Kill() error {
	if err := p.cmd.Process.Kill(); err != nil {
		return err
	}
	_ = p.wait()
	return nil
}

// Stop ends the process with SIGTERM and waits up to timeout for it to
// exit; the error is its exit status's, or the timeout's.
func (p *Proc) Stop(timeout time.Duration) error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-p.exited:
		return p.exitErr
	case <-time.After(timeout):
		return fmt.Errorf("%s did not exit within %v of SIGTERM", p.ID, timeout)
	}
}
