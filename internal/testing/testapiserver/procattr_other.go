//go:build !unix

package testapiserver

import (
	"os"
	"syscall"
)

// childSysProcAttr returns nil: process groups are a Unix notion.
func childSysProcAttr() *syscall.SysProcAttr { return nil }

// killGroup kills p alone.
func killGroup(p *os.Process) { _ = p.Kill() }
