package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/cli"
	"github.com/otter-sh/otter/internal/config"
)

// configTestHome points the XDG directories into a temporary home.
func configTestHome(t *testing.T) config.Paths {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		t.Setenv(v, filepath.Join(home, strings.ToLower(v)))
	}
	return config.DefaultPaths()
}

func wantExit(t *testing.T, err error, code int) {
	t.Helper()
	var ee *cli.ExitError
	if !errors.As(err, &ee) || ee.Code != code {
		t.Fatalf("err = %v, want exit code %d", err, code)
	}
}

// TestConfigTrustImportCommands walks a user through a cloned project: its
// .mcp.json servers wait for `otter trust`, `otter mcp import --write`
// copies them to the user file once and refuses to do it twice, and
// `otter config validate` reports a broken file with its line and exit 2.
func TestConfigTrustImportCommands(t *testing.T) {
	paths := configTestHome(t)
	proj := t.TempDir()
	mcpJSON := `{"mcpServers": {"everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}}}`
	if err := os.WriteFile(filepath.Join(proj, ".mcp.json"), []byte(mcpJSON), 0o644); err != nil {
		t.Fatal(err)
	}

	out, _, err := runOtter(t, "--cwd", proj, "config", "validate")
	if err != nil || !strings.Contains(out, "ok: 1 server from") || !strings.Contains(out, "otter trust") {
		t.Fatalf("validate untrusted: %q %v", out, err)
	}
	out, _, err = runOtter(t, "--cwd", proj, "trust", "--yes")
	if err != nil || !strings.Contains(out, "trusted ") || !strings.Contains(out, "everything") {
		t.Fatalf("trust: %q %v", out, err)
	}
	out, _, err = runOtter(t, "trust", "--list")
	if err != nil || !strings.Contains(out, filepath.Base(proj)) {
		t.Fatalf("trust --list: %q %v", out, err)
	}
	out, _, err = runOtter(t, "--cwd", proj, "config", "show")
	if err != nil || !strings.Contains(out, "# everything: project scope") || strings.Contains(out, "# disabled") {
		t.Fatalf("show after trust: %q %v", out, err)
	}
	if _, _, err = runOtter(t, "trust", "--revoke", proj); err != nil {
		t.Fatal(err)
	}
	_, _, err = runOtter(t, "trust", "--revoke", proj)
	wantExit(t, err, 2)

	out, _, err = runOtter(t, "--cwd", proj, "mcp", "import")
	if err != nil || !strings.Contains(out, "[[mcp.servers]]\nname = \"everything\"") {
		t.Fatalf("import: %q %v", out, err)
	}
	out, _, err = runOtter(t, "--cwd", proj, "mcp", "import", "--write")
	if err != nil || !strings.HasPrefix(out, "added 1 server to "+paths.UserConfigFile()+": everything") {
		t.Fatalf("import --write: %q %v", out, err)
	}
	before, _ := os.ReadFile(paths.UserConfigFile())
	_, _, err = runOtter(t, "--cwd", proj, "mcp", "import", "--write")
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), "already defines everything") {
		t.Errorf("second import: %v", err)
	}
	after, _ := os.ReadFile(paths.UserConfigFile())
	if string(before) != string(after) {
		t.Error("a refused import changed the user file")
	}
	if servers, err := config.FileServers(paths.UserConfigFile()); err != nil || len(servers) != 1 || servers[0].Command != "npx" {
		t.Errorf("user file after import: %+v %v", servers, err)
	}

	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("[[mcp.servers]]\nname = \"x\"\ncommand = \"y\"\ntransport = \"tcp\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = runOtter(t, "config", "validate", bad)
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), bad+":4:") {
		t.Errorf("validate bad file: %v", err)
	}
}

// Two servers whose names give the same tool prefix are legal but lose
// tools to each other: validate says so.
func TestConfigValidateWarnsOfToolPrefixClash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "config.toml")
	cfg := "[[mcp.servers]]\nname = \"my.srv\"\ncommand = \"true\"\n\n[[mcp.servers]]\nname = \"my_srv\"\ncommand = \"true\"\n\n[[mcp.servers]]\nname = \"other\"\ncommand = \"true\"\n"
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runOtter(t, "config", "validate", file)
	want := "warning: " + file + `:5: servers "my.srv" (line 1) and "my_srv" share the tool prefix mcp__my_srv__; a tool name they have in common is offered from "my.srv" only (rename one of them)`
	if err != nil || !strings.Contains(out, want) {
		t.Errorf("validate: %v\n%s", err, out)
	}
	if strings.Contains(out, `"other"`) {
		t.Errorf("a server without a clash is named in a warning:\n%s", out)
	}
}

// A --config file that does not exist is an error that names the flag.
func TestMissingConfigFlagFile(t *testing.T) {
	configTestHome(t)
	missing := filepath.Join(t.TempDir(), "nope.toml")
	for _, args := range [][]string{{"config", "show"}, {"mcp", "list"}} {
		_, _, err := runOtter(t, append([]string{"--config", missing}, args...)...)
		wantExit(t, err, 2)
		if !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "check the path given to --config") {
			t.Errorf("otter --config %s %s: err = %v, want it to name the file and --config", missing, strings.Join(args, " "), err)
		}
	}
}

// A project whose only config file is broken and not yet trusted: otter
// leaves the file out so the user's own config still works, and says so
// with the file's path and what to change, headless (config validate, and
// on stderr for other commands) as in the TUI.
func TestBrokenUntrustedProjectFileIsReported(t *testing.T) {
	configTestHome(t)
	proj := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proj, ".otter"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(proj, ".otter", "config.toml")
	if err := os.WriteFile(file, []byte("[mcp.servers.fs]\ncommand = \"node\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runOtter(t, "--cwd", proj, "config", "validate")
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	if strings.Contains(out, "no config files found") || !strings.Contains(out, "warning: "+file) || !strings.Contains(out, "[[mcp.servers]]") {
		t.Errorf("validate does not name the broken project file:\n%s", out)
	}
	_, errOut, err := runOtter(t, "--cwd", proj, "mcp", "list")
	if err != nil {
		t.Fatalf("mcp list: %v", err)
	}
	if !strings.Contains(errOut, file) || !strings.Contains(errOut, "must be an array") {
		t.Errorf("mcp list says nothing on stderr about the broken project file:\n%s", errOut)
	}
}
