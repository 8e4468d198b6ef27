package mcphost

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/servers"
)

// problemConfig writes a config with two servers that run the test
// binary: "good", and "github", whose env names ${OTTER_TEST_GH_TOKEN}.
// Each server records its pids in its own file. load loads the config with
// env as the environment.
func problemConfig(t *testing.T) (load func(env map[string]string) *config.Config, file, goodPids, ghPids string) {
	t.Helper()
	dir := t.TempDir()
	goodPids, ghPids = filepath.Join(dir, "good.pids"), filepath.Join(dir, "github.pids")
	paths := config.Paths{
		ConfigDir: filepath.Join(dir, "config"),
		DataDir:   filepath.Join(dir, "data"),
		StateDir:  filepath.Join(dir, "state"),
		CacheDir:  filepath.Join(dir, "cache"),
	}
	file = paths.UserConfigFile()
	if err := os.MkdirAll(paths.ConfigDir, 0o755); err != nil {
		t.Fatal(err)
	}
	content := fmt.Sprintf(`[[mcp.servers]]
name = "good"
command = %[1]q
env = { %[2]s = "normal", %[3]s = %[4]q }

[[mcp.servers]]
name = "github"
command = %[1]q
env = { %[2]s = "normal", %[3]s = %[5]q, GITHUB_TOKEN = "${OTTER_TEST_GH_TOKEN}" }
`, os.Args[0], envMode, envPidFile, goodPids, ghPids)
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	load = func(env map[string]string) *config.Config {
		t.Helper()
		cfg, err := config.Load(config.LoadOptions{
			Paths:     paths,
			WorkDir:   dir,
			LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		})
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		for i := range cfg.MCP.Servers {
			cfg.MCP.Servers[i].StartupTimeout = dur(liveness)
		}
		return cfg
	}
	return load, file, goodPids, ghPids
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// A server whose config has a ${VAR} that could not be expanded is failed
// with that reason from the start and never runs; the other server starts
// as usual; a reload that fixes the variable brings it up.
func TestServerWithConfigProblem(t *testing.T) {
	load, file, _, ghPids := problemConfig(t)
	cfg := load(nil)
	gh, _ := cfg.Server("github")
	if gh.Problem == nil {
		t.Fatal("the config has no problem for github")
	}
	reason := gh.Problem.Error()
	for _, want := range []string{"environment variable OTTER_TEST_GH_TOKEN is not set", `server "github"`, file + ":9:", "${OTTER_TEST_GH_TOKEN:-default}"} {
		if !strings.Contains(reason, want) {
			t.Fatalf("problem %q does not contain %q", reason, want)
		}
	}

	h := newHarness(t, cfg.MCP, servers.Options{})
	// Failed before anything starts: nothing to wait for.
	if st, _ := h.m.Status("github"); st.State != servers.StateFailed || st.Error != reason {
		t.Fatalf("github before Start: %s %q, want failed %q", st.State, st.Error, reason)
	}
	h.m.Start(context.Background())
	if err := h.m.WaitSettled(context.Background()); err != nil {
		t.Fatal(err)
	}
	good, _ := h.m.Status("good")
	if good.State != servers.StateConnected || good.Tools == 0 {
		t.Fatalf("good: %s %q with %d tools, want connected", good.State, good.Error, good.Tools)
	}
	if got := h.callText("good", "echo", `{"text":"still here"}`); got != "still here" {
		t.Errorf("good's echo = %q", got)
	}
	st, _ := h.m.Status("github")
	if st.State != servers.StateFailed || st.Error != reason || st.Attempts != 0 {
		t.Errorf("github: %s %q (attempts %d), want failed with %q", st.State, st.Error, st.Attempts, reason)
	}
	for _, e := range h.eventsOf(func(e servers.Event) bool {
		sc, ok := e.(servers.StateChanged)
		return ok && sc.Status.Name == "github"
	}) {
		if s := e.(servers.StateChanged).Status.State; s != servers.StateFailed {
			t.Errorf("github went %s; a server with a config problem must never try to start", s)
		}
	}
	if slices.ContainsFunc(entryNames(h.set), func(n string) bool { return strings.HasPrefix(n, "mcp__github__") }) {
		t.Errorf("github's tools are offered: %v", entryNames(h.set))
	}

	// Reconnecting cannot cure it, and says why.
	if err := h.m.Reconnect(context.Background(), "github"); err == nil || !strings.Contains(err.Error(), reason) {
		t.Errorf("Reconnect(github) = %v, want the problem", err)
	}
	// Turned off and on again for the session: disabled, then failed with
	// the reason again (and an error saying it cannot start).
	if err := h.m.SetEnabled(context.Background(), "github", false); err != nil {
		t.Fatal(err)
	}
	h.waitState("github", servers.StateDisabled)
	if err := h.m.SetEnabled(context.Background(), "github", true); err == nil || !strings.Contains(err.Error(), "OTTER_TEST_GH_TOKEN") {
		t.Errorf("SetEnabled(github, true) = %v, want the problem", err)
	}
	if st := h.waitState("github", servers.StateFailed); st.Error != reason {
		t.Errorf("github after enabling: %q, want %q", st.Error, reason)
	}
	if fileExists(ghPids) {
		t.Fatalf("github's process was started (pids %s)", ghPids)
	}

	// Reloading the same config changes nothing.
	if diff := h.m.Reload(context.Background(), load(nil).MCP); !slices.Equal(diff.Unchanged, []string{"github", "good"}) {
		t.Errorf("reload of the same config: %+v, want both unchanged", diff)
	}

	// The variable is set now: a reload starts github, leaves good alone.
	fixed := load(map[string]string{"OTTER_TEST_GH_TOKEN": "tok"})
	if g, _ := fixed.Server("github"); g.Problem != nil {
		t.Fatalf("github still has a problem: %v", g.Problem)
	}
	diff := h.m.Reload(context.Background(), fixed.MCP)
	if !slices.Equal(diff.Changed, []string{"github"}) || !slices.Equal(diff.Unchanged, []string{"good"}) {
		t.Errorf("reload after the fix: %+v, want github changed and good unchanged", diff)
	}
	st = h.waitState("github", servers.StateConnected)
	if st.Error != "" || st.Tools == 0 {
		t.Errorf("github after the fix: %+v", st)
	}
	if got := h.callText("github", "echo", `{"text":"up"}`); got != "up" {
		t.Errorf("github's echo = %q", got)
	}
	if after, _ := h.m.Status("good"); !after.ConnectedAt.Equal(good.ConnectedAt) {
		t.Error("good was restarted although it did not change")
	}
	if !fileExists(ghPids) {
		t.Error("github's process did not record its pid once started")
	}
}
