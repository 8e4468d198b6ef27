package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/cli"
)

// Flags a user gets wrong are refused with what to do, not silently
// ignored or replaced; --help shows a readable --resume.
func TestGlobalFlagsRefuseWhatCannotWork(t *testing.T) {
	configTestHome(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--cwd", filepath.Join(dir, "missing"), "mcp", "list"}, "no such directory"},
		{[]string{"--cwd", file, "mcp", "list"}, "not a directory"},
		{[]string{"--config", "a.toml", "--config", "b.toml", "mcp", "list"}, "--config given twice"},
	} {
		_, _, err := runOtter(t, tc.args...)
		if err == nil || exitStatus(err) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("otter %s: %v (exit %d), want exit 2 saying %q", strings.Join(tc.args, " "), err, exitStatus(err), tc.want)
		}
	}
	out, _, err := runOtter(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(out, 0) || !strings.Contains(out, "--resume ID[=pick]") {
		t.Errorf("--help shows --resume as:\n%s", out)
	}
}

// A table given a plain value ("mcp = 5") is named as such, not by otter's
// Go type; `mcp get --json` writes & as &; a failed server's one stderr
// line is said once.
func TestConfigAndServerMessagesReadWell(t *testing.T) {
	configTestHome(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("mcp = 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := runOtter(t, "--config", bad, "mcp", "list")
	wantExit(t, err, 2)
	if msg := err.Error(); !strings.Contains(msg, "bad value for mcp: must be a table ([mcp]), not an integer") || strings.Contains(msg, "tomlDoc") {
		t.Errorf("mcp = 5: %v", err)
	}
	cfg := filepath.Join(dir, "s.toml")
	if err := os.WriteFile(cfg, []byte("[[mcp.servers]]\nname = \"a&b\"\ncommand = \"sh\"\nargs = [\"-c\", \"echo boom >&2; exit 3\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := runOtter(t, "--config", cfg, "mcp", "get", "a&b", "--json")
	if err != nil || !strings.Contains(out, `"name": "a&b"`) || !strings.Contains(out, `echo boom >&2`) {
		t.Errorf("mcp get --json: %v\n%s", err, out)
	}
	_, _, err = runOtter(t, "--config", cfg, "mcp", "call", "a&b", "x")
	wantExit(t, err, 2)
	if n := strings.Count(err.Error(), "boom"); n != 1 {
		t.Errorf("the server's stderr line is said %d times:\n%v", n, err)
	}
}

// exitStatus is the status main exits with for err: an ExitError's code,
// else 2.
func exitStatus(err error) int {
	var ee *cli.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 2
}
