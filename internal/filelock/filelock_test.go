package filelock

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// TestLockDirSerializesReadModifyWrite: 8 goroutines, each with its own
// open of the directory, increment a counter file 50 times each under
// LockDir; no increment is lost.
func TestLockDirSerializesReadModifyWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	counter := filepath.Join(dir, "n")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				unlock, err := LockDir(dir)
				if err != nil {
					t.Error(err)
					return
				}
				data, _ := os.ReadFile(counter)
				n, _ := strconv.Atoi(string(data))
				if err := os.WriteFile(counter, []byte(strconv.Itoa(n+1)), 0o600); err != nil {
					t.Error(err)
				}
				unlock()
			}
		})
	}
	wg.Wait()
	if data, _ := os.ReadFile(counter); string(data) != "400" {
		t.Errorf("counter = %q, want 400", data)
	}
}
