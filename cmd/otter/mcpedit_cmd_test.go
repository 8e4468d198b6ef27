package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// TestMCPEditsRefuseAnInlineServersArray: with the servers written as an
// inline array, `otter mcp disable|enable|remove|add` change nothing and
// say where to edit by hand — disable used to turn all of MCP off, and
// remove to delete every server of the array.
func TestMCPEditsRefuseAnInlineServersArray(t *testing.T) {
	paths := configTestHome(t)
	file := paths.UserConfigFile()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	mine := "[mcp]\nservers = [ {name=\"x\", command=\"echo\"}, {name=\"mem\", command=\"echo\"} ]\n"
	if err := os.WriteFile(file, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"disable", "x"}, "write enabled = false inside its { … } by hand"},
		{[]string{"enable", "x"}, "write enabled = true inside its { … } by hand"},
		{[]string{"remove", "mem"}, "delete its { … } from the array by hand"},
		{[]string{"add", "y", "--", "echo", "hi"}, `add { name = "y", transport = "stdio", command = "echo", args = ["hi"] } to the array by hand`},
	} {
		stdout, _, err := runOtter(t, append([]string{"mcp"}, c.args...)...)
		wantExit(t, err, 2)
		if !strings.HasPrefix(err.Error(), file+":2: ") || !strings.Contains(err.Error(), "nothing changed") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("mcp %s: %v", strings.Join(c.args, " "), err)
		}
		if stdout != "" {
			t.Errorf("mcp %s said %q", strings.Join(c.args, " "), stdout)
		}
		if data, _ := os.ReadFile(file); string(data) != mine {
			t.Fatalf("mcp %s changed the file to\n%s", strings.Join(c.args, " "), data)
		}
	}
	stdout, _, err := runOtter(t, "mcp", "get", "x", "--json")
	if err != nil || !strings.Contains(stdout, `"enabled": true`) {
		t.Errorf("x after the refused edits: %v\n%s", err, stdout)
	}
}

// TestParallelMCPAddsKeepEveryServer runs 20 real otter processes at once,
// each adding a server to the same user config file: every one of them must
// be in the file afterwards, and the file keeps its comment and its mode.
// Before, each read the file, added its entry and wrote it back, so the
// processes lost each other's servers.
func TestParallelMCPAddsKeepEveryServer(t *testing.T) {
	bin := testpeer.Otter(t)
	paths := configTestHome(t)
	file := paths.UserConfigFile()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("# mine\n[mcp]\nauto_reload = true\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			out, err := exec.Command(bin, "mcp", "add", fmt.Sprintf("r%d", i), "--", "echo").CombinedOutput()
			if err != nil {
				errs[i] = fmt.Errorf("otter mcp add r%d: %w\n%s", i, err, out)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	servers, err := config.FileServers(file)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	if len(slices.Compact(names)) != n {
		t.Errorf("after %d parallel adds the file has %d servers: %v", n, len(names), names)
	}
	data, _ := os.ReadFile(file)
	if !strings.HasPrefix(string(data), "# mine\n[mcp]\nauto_reload = true\n") {
		t.Errorf("the file lost its beginning:\n%s", data)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after the edits: %v %v, want 0640", fi.Mode(), err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(file), ".config.toml.*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// TestMCPEditsFollowASymlinkedConfig: a config.toml that is a symlink into
// a dotfiles repository stays a symlink through add, disable and remove,
// and the file it points to gets the changes.
func TestMCPEditsFollowASymlinkedConfig(t *testing.T) {
	paths := configTestHome(t)
	file := paths.UserConfigFile()
	dotfiles := t.TempDir()
	real := filepath.Join(dotfiles, "otter.toml")
	mine := "# kept in dotfiles\n[mcp]\nauto_reload = true\n"
	if err := os.WriteFile(real, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, file); err != nil {
		t.Fatal(err)
	}
	isLink := func(step string) {
		t.Helper()
		if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("after %s, %s is no longer a symlink: %v %v", step, file, fi.Mode(), err)
		}
	}
	if _, stderr, err := runOtter(t, "mcp", "add", "docs", "--", "docs-mcp"); err != nil {
		t.Fatalf("add: %v\n%s", err, stderr)
	}
	isLink("add")
	data, _ := os.ReadFile(real)
	if !strings.HasPrefix(string(data), mine+"\n[[mcp.servers]]\nname = \"docs\"\n") {
		t.Errorf("%s after add:\n%s", real, data)
	}
	if _, _, err := runOtter(t, "mcp", "disable", "docs"); err != nil {
		t.Fatal(err)
	}
	isLink("disable")
	if data, _ := os.ReadFile(real); !strings.Contains(string(data), "enabled = false") {
		t.Errorf("%s after disable:\n%s", real, data)
	}
	if _, _, err := runOtter(t, "mcp", "remove", "docs"); err != nil {
		t.Fatal(err)
	}
	isLink("remove")
	if data, _ := os.ReadFile(real); string(data) != mine {
		t.Errorf("%s after add, disable and remove:\n%s\nwant\n%s", real, data, mine)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode of %s: %v, want 0644", real, fi.Mode())
	}
	if left, _ := os.ReadDir(filepath.Dir(file)); len(left) != 1 {
		t.Errorf("files next to the link: %v", left)
	}
}

// TestMCPAddRefusesAURLAsACommand: a URL with words after it, or a URL
// with --transport stdio, is refused with exit 2 and nothing written —
// before, both saved a stdio server whose command was the URL.
func TestMCPAddRefusesAURLAsACommand(t *testing.T) {
	paths := configTestHome(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"foo6", "http://x", "extra"}, `an http server takes one URL and nothing after it, not "http://x extra"`},
		{[]string{"--transport", "stdio", "foo7", "http://x/mcp"}, `"http://x/mcp" is a URL, not a command to run`},
		{[]string{"foo8", "--", "https://x/mcp", "--flag"}, `an http server takes one URL and nothing after it`},
	} {
		_, _, err := runOtter(t, append([]string{"mcp", "add"}, c.args...)...)
		wantExit(t, err, 2)
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("mcp add %s: %v\nwant %s", strings.Join(c.args, " "), err, c.want)
		}
	}
	if _, err := os.Stat(paths.UserConfigFile()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused add wrote %s (%v)", paths.UserConfigFile(), err)
	}
}

// TestConfigValidateReportsTheProviderPRefuses: `otter config validate`
// exits 2 at the file and line of what `otter -p` refuses in [agent] and
// [providers] (before, it printed ok), and still passes a configuration that
// leaves the provider to the environment.
func TestConfigValidateReportsTheProviderPRefuses(t *testing.T) {
	paths := configTestHome(t)
	file := paths.UserConfigFile()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ toml, want string }{
		{"# mine\n[agent]\nprovider = \"nope\"\n", `:3: [agent] provider = "nope" but there is no [providers.nope] table (none are defined).`},
		{"[agent]\nprovider = \"local\"\n\n[providers.local]\ntype = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n", ":4: [providers.local]: set model"},
		{"[providers.a]\ntype = \"openai\"\n[providers.b]\ntype = \"anthropic\"\n", `:1: [providers] defines several (a, b); choose one with [agent] provider = "a"`},
	} {
		if err := os.WriteFile(file, []byte(c.toml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := runOtter(t, "config", "validate")
		wantExit(t, err, 2)
		if !strings.Contains(err.Error(), file+c.want) {
			t.Errorf("validate of\n%s: %v\nwant …%s%s", c.toml, err, file, c.want)
		}
		_, _, err = runOtter(t, "-p", "hi")
		wantExit(t, err, 2)
	}
	if err := os.WriteFile(file, []byte("[agent]\nmodel = \"gpt-5\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _, err := runOtter(t, "config", "validate"); err != nil || !strings.HasPrefix(out, "ok: ") {
		t.Errorf("validate without a provider: %q %v", out, err)
	}
}

// TestAllowToolsRefusesABadGlob: `otter -p --allow-tools '[bad'` exits 2
// before the model is asked, with the hint a bad glob in allowed_tools
// gets — before, the pattern was taken, never matched, and the answer went
// on without the tools it was meant to allow.
func TestAllowToolsRefusesABadGlob(t *testing.T) {
	configTestHome(t)
	srv := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"hello"}})
	cfg := promptConfig(t, srv, "")
	_, _, err := runOtter(t, "--config", cfg, "-p", "hi", "--allow-tools", "mcp__docs__*", "--allow-tools", "[bad")
	wantExit(t, err, 2)
	if want := `--allow-tools: bad glob pattern "[bad" (` + config.GlobHint + ")"; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
	// The same hint as for a bad pattern in the config.
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("[[mcp.servers]]\nname = \"docs\"\ncommand = \"docs\"\nallowed_tools = [\"[bad\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = runOtter(t, "config", "validate", bad)
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), bad+`:4: server "docs": bad glob pattern "[bad" in allowed_tools (`+config.GlobHint+")") {
		t.Errorf("validate: %v", err)
	}
}

// TestHealthCheckIntervalHasAFloor: an [mcp] health_check_interval under a
// second (which pinged every server in a busy loop) is refused at its line
// by validate and by the commands that start servers; a negative one still
// turns the pings off.
func TestHealthCheckIntervalHasAFloor(t *testing.T) {
	configTestHome(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "hc.toml")
	if err := os.WriteFile(file, []byte("[mcp]\nauto_reload = true\nhealth_check_interval = \"1ns\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"config", "validate", file}, {"mcp", "list", "--config", file}} {
		_, _, err := runOtter(t, args...)
		wantExit(t, err, 2)
		if !strings.Contains(err.Error(), file+`:3: mcp.health_check_interval = 1ns is too short`) || !strings.Contains(err.Error(), "1s or more") {
			t.Errorf("otter %s: %v", strings.Join(args, " "), err)
		}
	}
	for _, ok := range []string{"1s", "-1s"} {
		if err := os.WriteFile(file, []byte("[mcp]\nhealth_check_interval = \""+ok+"\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := runOtter(t, "config", "validate", file); err != nil {
			t.Errorf("health_check_interval = %q: %v", ok, err)
		}
	}
}

// TestMCPRemoveOutsideAProjectCreatesNothing: removing or disabling a
// server in the project scope of a directory that is no project fails
// without creating .otter there (which would make it a project).
func TestMCPRemoveOutsideAProjectCreatesNothing(t *testing.T) {
	configTestHome(t)
	dir := t.TempDir()
	for _, args := range [][]string{{"remove", "x", "--scope", "project"}, {"disable", "x", "--scope", "local"}} {
		_, _, err := runOtter(t, append([]string{"--cwd", dir, "mcp"}, args...)...)
		wantExit(t, err, 2)
		if !errors.Is(err, config.ErrNoServer) {
			t.Errorf("mcp %s: %v", strings.Join(args, " "), err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("mcp %s left %v in %s", strings.Join(args, " "), entries, dir)
		}
	}
}
