package testapiserver

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// errExitedEarly marks a child that died while it was expected to run;
// Start retries with fresh ports only for this error.
var errExitedEarly = errors.New("exited early")

// process is one child program (etcd or kube-apiserver) that can be started,
// killed and started again with the same command line.
type process struct {
	// name is the program's short name, used in errors and log file names.
	name string
	// bin and args are the fixed command line; restarts reuse them.
	bin  string
	args []string
	// logPath receives the child's stdout and stderr, appended across
	// restarts so a crash and the restart stay in one file.
	logPath string

	// cmd is the running child, or nil when the process is stopped.
	cmd *exec.Cmd
	// exited is closed when cmd has been waited for; nil when cmd is nil.
	exited chan struct{}
	// waitErr is cmd.Wait's result; valid once exited is closed.
	waitErr error
}

// start launches the child in its own process group, with a death signal
// on Linux so it never outlives the test binary.
func (p *process) start() error {
	if p.cmd != nil {
		return fmt.Errorf("testapiserver: %s is already running", p.name)
	}
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("testapiserver: opening %s log: %w", p.name, err)
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Dir = filepath.Dir(p.logPath)
	cmd.SysProcAttr = childSysProcAttr()
	err = cmd.Start()
	_ = logFile.Close() // the child holds its own copy of the descriptor
	if err != nil {
		return fmt.Errorf("testapiserver: starting %s: %w", p.name, err)
	}
	p.cmd = cmd
	p.exited = make(chan struct{})
	go p.wait(cmd, p.exited)
	return nil
}

// wait reaps the child and records how it ended.
func (p *process) wait(cmd *exec.Cmd, exited chan struct{}) {
	p.waitErr = cmd.Wait()
	close(exited)
}

// kill sends SIGKILL to the child's whole process group and waits for the
// child to be reaped. Killing a stopped process is a no-op.
func (p *process) kill() {
	if p.cmd == nil {
		return
	}
	killGroup(p.cmd.Process)
	<-p.exited
	p.cmd, p.exited = nil, nil
}

// exitedErr reports, without blocking, whether the child has died on its own.
func (p *process) exitedErr() error {
	if p.exited == nil {
		return fmt.Errorf("testapiserver: %s is not running", p.name)
	}
	select {
	case <-p.exited:
		status := "exit status 0"
		if p.waitErr != nil {
			status = p.waitErr.Error()
		}
		return fmt.Errorf("testapiserver: %s %w (%s); log tail:\n%s", p.name, errExitedEarly, status, p.logTail(40))
	default:
		return nil
	}
}

// logTail returns the last n lines of the child's log, for error messages.
func (p *process) logTail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
