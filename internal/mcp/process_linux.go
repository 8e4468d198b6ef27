package mcp

import "syscall"

// sysProcAttr puts a stdio server in its own process group, and has the
// kernel kill it if otter dies without stopping it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
