//go:build unix

package serve

import "syscall"

// openFileLimit is the process's soft RLIMIT_NOFILE (Go raises it to the
// hard limit at start), or 0 if it cannot be read or is unlimited.
func openFileLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 0
	}
	return int(rl.Cur)
}
