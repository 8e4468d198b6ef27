package testpeer

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The otter binary of this test process: linking ./cmd/otter takes most of
// 20 s on a small machine, so a package's tests share one build instead of
// running `go build` per test.
var otter struct {
	running bool // Run is driving the tests, and removes the binary after them
	once    sync.Once
	dir     string
	path    string
	err     error
}

// Run runs a package's tests (call it from TestMain:
// os.Exit(testpeer.Run(m))) and then removes the otter binary Otter built
// for them.
func Run(m *testing.M) int {
	otter.running = true
	code := m.Run()
	if otter.dir != "" {
		_ = os.RemoveAll(otter.dir)
	}
	return code
}

// Otter returns the path of the real otter binary, built from this module's
// ./cmd/otter with its launcher otter-sandbox beside it (scripts/build.sh,
// as `make build`) the first time a test of the package asks for it. The
// package's TestMain must go through Run, which removes the binary when the
// tests are done.
func Otter(tb testing.TB) string {
	tb.Helper()
	if !otter.running {
		tb.Fatal("testpeer.Otter needs the package's TestMain to call testpeer.Run(m), which removes the binary afterwards")
	}
	otter.once.Do(func() { otter.path, otter.err = buildOtter() })
	if otter.err != nil {
		tb.Fatal(otter.err)
	}
	return otter.path
}

func buildOtter() (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	otter.dir, err = os.MkdirTemp("", "otter-test-bin-")
	if err != nil {
		return "", fmt.Errorf("a directory for the test binary: %w", err)
	}
	// As `make build` does: the tests run the binaries users get, otter
	// and its launcher beside it.
	build := exec.Command("bash", "scripts/build.sh", otter.dir)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("scripts/build.sh in %s: %w\n%s", root, err, out)
	}
	return filepath.Join(otter.dir, "otter"), nil
}

// HomeEnv is the whole environment of a person whose home is home and who
// has nothing else set: PATH (this process's, to find Node and the shell),
// HOME, and the XDG folders where they are by default, under home — so
// that the real binary reads and writes nothing of the machine's own
// user.
func HomeEnv(home string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}
}
