// Package filelock takes exclusive locks that other processes honour:
// flock(2) on unix, LockFileEx on Windows, and a lock within the process
// elsewhere. otter's token store and its config editor use it around their
// read-modify-write cycles, so that two otter processes cannot lose each
// other's update. It imports only the standard library and x/sys.
package filelock

import (
	"fmt"
	"os"
)

// Lock takes the exclusive lock of f, waiting for it. The lock belongs to
// the open file, so two opens in one process exclude each other just like
// two processes do; closing f releases it.
func Lock(f *os.File) error { return lockFile(f) }

// Unlock releases the lock of f taken by Lock.
func Unlock(f *os.File) error { return unlockFile(f) }

// LockDir takes the exclusive lock of directory dir, which must exist,
// waiting for it, and returns the function that releases it. On unix the
// directory itself is locked, so no file is left behind; on Windows, which
// cannot lock a directory, the file .otter.lock in it is.
func LockDir(dir string) (unlock func(), err error) {
	f, err := openDirLock(dir)
	if err != nil {
		return nil, fmt.Errorf("open %s to lock it: %w", dir, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() {
		unlockFile(f)
		f.Close()
	}, nil
}
