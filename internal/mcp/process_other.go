//go:build unix && !linux

package mcp

import "syscall"

// sysProcAttr puts a stdio server in its own process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
