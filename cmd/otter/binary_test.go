package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	builtOnce sync.Once
	builtBin  string
	builtErr  error
)

// otterBinary builds the real otter binary once for the package's tests and
// returns its path.
func otterBinary(t testing.TB) string {
	t.Helper()
	builtOnce.Do(func() {
		dir, err := os.MkdirTemp("", "otter-bin-")
		if err != nil {
			builtErr = err
			return
		}
		builtBin = filepath.Join(dir, "otter")
		if out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput(); err != nil {
			builtErr = &buildError{out: string(out), err: err}
		}
	})
	if builtErr != nil {
		t.Fatalf("go build ./cmd/otter: %v", builtErr)
	}
	return builtBin
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// otterHome is a temporary home with every XDG directory in it, as the
// environment of a real otter process.
func otterHome(t testing.TB) (home string, env []string) {
	t.Helper()
	home = t.TempDir()
	env = append(os.Environ(), "HOME="+home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		env = append(env, v+"="+filepath.Join(home, strings.ToLower(v)))
	}
	return home, env
}
