package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/testpeer"
)

// TestLogFileInAMissingDirectory runs the real binary with --log-file in
// a directory that does not exist: every command — those that log nothing
// too — refuses it with exit status 2, naming the directory and what to
// do, and creates nothing. A file in a directory that exists is created
// and the command runs. Before, `mcp list` made the directories (silently,
// wherever the typo pointed) and `sessions list` and `config show` took
// the flag without a word (exit 0).
func TestLogFileInAMissingDirectory(t *testing.T) {
	t.Parallel()
	bin := testpeer.Otter(t)
	home, env := otterHome(t)
	missing := filepath.Join(home, "nonexistent", "dir")
	run := func(args ...string) (string, error) {
		_, stderr, err := runIn(bin, home, env, args...)
		return stderr, err
	}
	for _, c := range [][]string{{"mcp", "list"}, {"sessions", "list"}, {"config", "show"}} {
		stderr, err := run(append([]string{"--log-file", filepath.Join(missing, "x.log")}, c...)...)
		var ee *exec.ExitError
		want := "otter: --log-file " + filepath.Join(missing, "x.log") + ": there is no directory " + missing + "; create it first (mkdir -p " + missing + ")"
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.HasPrefix(stderr, want) {
			t.Errorf("otter --log-file … %s: %v, stderr %q; want exit status 2 and %q", strings.Join(c, " "), err, stderr, want)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "nonexistent")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a directory was made for the log file: %v", err)
	}
	stderr, err := run("--log-file", home, "sessions", "list")
	if err == nil || !strings.Contains(stderr, "that is a directory; give a file name, such as "+filepath.Join(home, "otter.log")) {
		t.Errorf("--log-file DIR: %v, stderr %q", err, stderr)
	}
	good := filepath.Join(home, "otter.log")
	if stderr, err := run("--log-file", good, "sessions", "list"); err != nil {
		t.Fatalf("--log-file in a directory that exists: %v\n%s", err, stderr)
	}
	if _, err := os.Stat(good); err != nil {
		t.Errorf("the log file was not created: %v", err)
	}
}
