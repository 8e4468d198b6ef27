//go:build windows

package filelock

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// lockFile takes an exclusive lock (LockFileEx) on the first byte of f,
// waiting for it. Like flock, it excludes other handles in this process as
// well as other processes, so a rotated refresh token is never lost to a
// concurrent refresh.
func lockFile(f *os.File) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol)
}

func unlockFile(f *os.File) error {
	var ol windows.Overlapped
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

func openDirLock(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, ".otter.lock"), os.O_RDWR|os.O_CREATE, 0o600)
}
