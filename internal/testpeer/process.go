package testpeer

import (
	"bytes"
	"os"
	"path/filepath"
)

// MarkedProcesses returns the pids (as /proc names them) of the processes
// whose environment holds marker, a "KEY=value" a test gave otter and
// so everything otter started: what is left of them once otter is gone
// is a leak. Linux only; it fails where /proc cannot be read, so that a
// check for leftovers never passes by seeing nothing.
func MarkedProcesses(marker string) ([]string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue // gone, or not ours
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if string(kv) == marker {
				pids = append(pids, e.Name())
			}
		}
	}
	return pids, nil
}
