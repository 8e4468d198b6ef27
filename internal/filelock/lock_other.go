//go:build !unix && !windows

package filelock

import (
	"os"
	"sync"
)

// On systems without flock, the token store is locked only within this
// process.
var processLock sync.Mutex

func lockFile(*os.File) error   { processLock.Lock(); return nil }
func unlockFile(*os.File) error { processLock.Unlock(); return nil }

func openDirLock(dir string) (*os.File, error) { return os.Open(dir) }
