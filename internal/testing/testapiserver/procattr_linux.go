//go:build linux

package testapiserver

import (
	"os"
	"syscall"
)

// childSysProcAttr puts the child in its own process group (so killGroup
// reaches anything it forks, and a terminal's Ctrl-C goes to the test
// binary only) and asks the kernel to SIGKILL it when the test binary dies,
// even by SIGKILL or a panic, so no etcd or apiserver is ever orphaned.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends SIGKILL to the process group led by p.
func killGroup(p *os.Process) {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil {
		_ = p.Kill()
	}
}
