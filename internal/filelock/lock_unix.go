//go:build unix

package filelock

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock (flock) on f, waiting for it.
// flock locks belong to the open file description, so two opens in one
// process exclude each other just like two processes do.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

func openDirLock(dir string) (*os.File, error) { return os.Open(dir) }
