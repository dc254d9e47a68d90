//go:build unix && !linux

package testapiserver

import (
	"os"
	"syscall"
)

// childSysProcAttr puts the child in its own process group. Outside Linux
// there is no parent-death signal: a crashed test binary can leave children
// behind, which t.Cleanup cannot prevent.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// killGroup sends SIGKILL to the process group led by p.
func killGroup(p *os.Process) {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil {
		_ = p.Kill()
	}
}
