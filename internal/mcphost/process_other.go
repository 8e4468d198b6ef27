//go:build unix && !linux

package mcphost

import "syscall"

// sysProcAttr puts a stdio server in its own process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// groupHasLiveMember is answered by kill(-pgid, 0) alone here.
func groupHasLiveMember(pgid int) bool { return true }
