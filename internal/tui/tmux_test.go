package tui

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/testpeer"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// TestRealBinaryInTmux runs the real otter binary in an 80x24 tmux pane
// with the MCP reference server configured (and one server that cannot
// start) and a fake OpenAI-compatible model on 127.0.0.1. It looks at /mcp
// and /mcp tools, calls a tool with /call, chats through a permission
// prompt and the reference server's elicitation form, lets auto_reload and
// /mcp reload pick up a new server, quits with ctrl+c twice, and checks
// that otter exited 0 and no server process is left behind.
func TestRealBinaryInTmux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process-leak check reads /proc")
	}
	peers := testpeer.Require(t)
	node, server := peers.Node, peers.Everything
	dir := t.TempDir()
	marker := "OTTER_TMUX_TEST=" + dir
	model := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Text: []string{"I will ask you."}, Calls: []llmtest.Call{{ID: "call_1", Name: "mcp__everything__trigger-elicitation-request", Args: `{}`}}},
		llmtest.Reply{Text: []string{"Thanks, ", "Ada."}, InputTokens: 1500, OutputTokens: 20},
	)
	cfg := fakeModelConfig(model.URL) + fmt.Sprintf(`
[mcp]
auto_reload = true

[[mcp.servers]]
name = "everything"
command = %q
args = [%q, "stdio"]
env = { OTTER_TMUX_TEST = %q }

[[mcp.servers]]
name = "broken"
command = %q
`, node, server, dir, filepath.Join(dir, "no-such-server"))
	p := startTmux(t, dir, cfg, 80, 24)
	work, cfgFile, exitFile := p.work, p.cfgFile, p.exitFile
	home := p.home
	capture, waitFor, waitGone, keys := p.capture, p.waitFor, p.waitGone, p.keys

	waitFor("otter", "/help", "fake/fake-model")
	waitFor("1/2 servers")

	// /mcp: the reference server connected, the missing one failed.
	keys("/mcp", "Enter")
	s := waitFor("MCP servers", "everything", "connected", "broken", "failed")
	if !strings.Contains(s, "stdio") {
		t.Errorf("/mcp does not show the transport:\n%s", s)
	}
	waitFor("last error:")    // broken sorts first and is selected
	keys("Escape")            // alone: ESC followed by a key reads as alt+key
	waitGone("1/2 connected") // the panel's title

	// /mcp tools, filtered.
	keys("/mcp tools", "Enter")
	waitFor("type to filter")
	keys("get-su")
	waitFor("1 shown", "mcp__everything__get-sum")
	keys("Escape")
	waitGone("type to filter")

	// /call with JSON arguments.
	keys(`/call mcp__everything__echo {"message":"hello from tmux"}`, "Enter")
	waitFor("⎿ Echo: hello from tmux")

	// A chat turn: the model calls a tool that is not read-only (a
	// permission prompt), the tool asks for input (an elicitation form).
	keys("please ask me something", "Enter")
	// The permission prompt is a panel under the chat. "Always allow" in
	// a directory that is no project goes to the user config, and the
	// directory stays no project.
	waitFor("Allow mcp__everything__trigger-elicitation-request?", "Allow once", "› please ask me something", "Deny")
	keys("Down", "Down", "Enter")
	waitFor("everything asks for input", "Please provide inputs")
	keys("Ada")
	for i := 0; strings.Contains(capture(), "asks for input"); i++ {
		if i > 60 {
			t.Fatalf("the elicitation form never completed:\n%s", capture())
		}
		keys("Enter")
		time.Sleep(200 * time.Millisecond)
	}
	waitFor("Thanks, Ada.", "✓", "User provided the requested information", "19% of 8.2k?", "always allowing mcp__everything__trigger-elicitation-request", "saved to ~/.config/otter/config.toml")
	if _, err := os.Stat(filepath.Join(work, ".otter")); err == nil {
		t.Errorf("allow always created %s: the directory became a project", filepath.Join(work, ".otter"))
	}
	if b, _ := os.ReadFile(cfgFile); !strings.Contains(string(b), `"mcp__everything__trigger-elicitation-request" = "allow"`) &&
		!strings.Contains(string(b), `mcp__everything__trigger-elicitation-request = "allow"`) {
		t.Errorf("allow always is not in the user config:\n%s", b)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	if res := reqs[1].LastToolResults(); len(res) != 1 || !strings.Contains(res[0].Text, "Name: Ada") || !strings.Contains(res[0].Text, "Favorite Integer: 42") {
		t.Errorf("the tool result sent to the model = %+v; want the form's answers with the schema defaults", res)
	}

	// Adding a server to the config: auto_reload picks it up, and
	// /mcp reload then finds nothing more to change.
	more := fmt.Sprintf("\n[[mcp.servers]]\nname = \"second\"\ncommand = %q\nargs = [%q, \"stdio\"]\nenv = { OTTER_TMUX_TEST = %q }\n", node, server, dir)
	if err := os.WriteFile(cfgFile, []byte(cfg+more), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor("config changed on disk; reloaded: added second", "2/3 servers")
	keys("/mcp reload", "Enter")
	waitFor("config reloaded: no server changed · 3 unchanged")

	if n := len(markedProcesses(t, marker)); n == 0 {
		t.Fatal("found no server-everything process while otter runs: the process check is broken")
	}
	keys("C-c")
	waitFor("press ctrl+c again to quit")
	keys("C-c")

	deadline := time.Now().Add(60 * time.Second)
	for {
		b, err := os.ReadFile(exitFile)
		if err == nil {
			if got := strings.TrimSpace(string(b)); got != "exit=0" {
				t.Errorf("otter ended with %s, want exit=0", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("otter did not exit after ctrl+c twice; screen:\n%s", capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if left := markedProcesses(t, marker); len(left) > 0 {
		t.Errorf("server processes outlived otter: %v", left)
	}
	log, err := os.ReadFile(filepath.Join(home, ".local/state/otter/otter.log"))
	if err != nil {
		t.Errorf("no log file under XDG_STATE_HOME: %v", err)
	} else if !bytes.Contains(log, []byte("broken")) {
		t.Logf("log:\n%s", log)
	}
}

// fakeModelConfig is the config of a provider "fake" at url (an llmtest
// OpenAI peer).
func fakeModelConfig(url string) string {
	return fmt.Sprintf(`
[agent]
provider = "fake"
model = "fake-model"

[providers.fake]
type = "openai"
base_url = %q
api_key = "test-key"
`, url)
}

// tmuxPane is the real otter binary running in a tmux pane, with a home
// directory and a config of its own.
type tmuxPane struct {
	t                             *testing.T
	sock, tmux                    string
	name                          string // the tmux session
	home, work, cfgFile, exitFile string
}

// startTmux runs the package's otter binary in a w×h tmux pane (session
// "otter-tui") in dir/work, with cfg as the user config.
func startTmux(t *testing.T, dir, cfg string, w, h int) *tmuxPane {
	t.Helper()
	return startTmuxAs(t, "otter-tui", dir, cfg, w, h)
}

// startTmuxAs is startTmux with the tmux session's name and otter's
// arguments.
func startTmuxAs(t *testing.T, name, dir, cfg string, w, h int, args ...string) *tmuxPane {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("tmux is not installed: run `make test-deps` (scripts/install-system-deps.sh) or `apt-get install -y tmux`")
	}
	bin := testpeer.Otter(t)
	p := &tmuxPane{t: t, tmux: tmux, name: name, sock: filepath.Join(dir, name+".sock"), // a session of its own: no race with a server still exiting
		home: filepath.Join(dir, "home"), work: filepath.Join(dir, "work"), exitFile: filepath.Join(dir, "exit-status")}
	cfgDir := filepath.Join(p.home, ".config", "otter")
	for _, d := range []string{cfgDir, p.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p.cfgFile = filepath.Join(cfgDir, "config.toml")
	if err := os.WriteFile(p.cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "run.sh")
	home := p.home
	run := fmt.Sprintf(`#!/bin/sh
cd %q || exit 99
unset ANTHROPIC_API_KEY OPENAI_API_KEY OPENAI_BASE_URL ANTHROPIC_BASE_URL
export HOME=%q XDG_CONFIG_HOME=%q XDG_STATE_HOME=%q XDG_DATA_HOME=%q XDG_CACHE_HOME=%q TERM=xterm-256color
%q%s
echo "exit=$?" > %q
`, p.work, home, filepath.Join(home, ".config"), filepath.Join(home, ".local/state"),
		filepath.Join(home, ".local/share"), filepath.Join(home, ".cache"), bin, quoted(args), p.exitFile)
	if err := os.WriteFile(script, []byte(run), 0o755); err != nil {
		t.Fatal(err)
	}
	p.tm("new-session", "-d", "-s", name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), script)
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", p.sock, "kill-server").Run() })
	return p
}

func (p *tmuxPane) tm(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(p.tmux, append([]string{"-S", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// quoted is args as shell words, each after a space.
func quoted(args []string) string {
	var b strings.Builder
	for _, a := range args {
		fmt.Fprintf(&b, " %q", a)
	}
	return b.String()
}

func (p *tmuxPane) capture() string { return p.tm("capture-pane", "-p", "-t", p.name) }

func (p *tmuxPane) keys(k ...string) { p.tm(append([]string{"send-keys", "-t", p.name}, k...)...) }

// waitFor waits until the pane shows every string in want.
func (p *tmuxPane) waitFor(want ...string) string {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		s = p.capture()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.t.Fatalf("the pane never showed %q; last screen:\n%s", want, s)
	return ""
}

// waitGone waits until the pane no longer shows gone.
func (p *tmuxPane) waitGone(gone string) {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for strings.Contains(p.capture(), gone) {
		if time.Now().After(deadline) {
			p.t.Fatalf("the pane still shows %q:\n%s", gone, p.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitExit waits until otter has exited, and checks it exited 0.
func (p *tmuxPane) waitExit() {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, err := os.ReadFile(p.exitFile)
		if err == nil {
			if got := strings.TrimSpace(string(b)); got != "exit=0" {
				p.t.Errorf("otter ended with %s, want exit=0", got)
			}
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("otter did not exit; screen:\n%s", p.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// markedProcesses returns the pids whose environment holds marker.
func markedProcesses(t *testing.T, marker string) []string {
	t.Helper()
	pids, err := testpeer.MarkedProcesses(marker)
	if err != nil {
		t.Fatal(err)
	}
	return pids
}
