package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// fortySevenTools serves 47 tools over streamable HTTP, each with a
// description and schema the size of a reference server's (about 600
// bytes): the three reference servers of issue 26 held 47 such tools.
// An SDK server in the test, not the npm servers, so that the count and
// size do not move with the servers' releases.
func fortySevenTools(t *testing.T) string {
	t.Helper()
	server := sdk.NewServer(&sdk.Implementation{Name: "tools47", Version: "1.0.0"}, nil)
	for i := range 47 {
		name := fmt.Sprintf("tool_%02d", i+1)
		desc := fmt.Sprintf("Tool %d of the test server. ", i+1) + strings.Repeat("It reads a record of the store by its path and returns its fields, with the version and the time it last changed. ", 3)
		schema := map[string]any{"type": "object", "properties": map[string]any{
			"path":    map[string]any{"type": "string", "description": "the record's path in the store, from its root"},
			"version": map[string]any{"type": "integer", "description": "the version to read; the latest when left out"},
			"fields":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "the fields to return; all when left out"},
		}, "required": []string{"path"}}
		server.AddTool(&sdk.Tool{Name: name, Description: desc, InputSchema: schema},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name}}}, nil
			})
	}
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestTwentyTurnsOnALearnedOllamaWindow is issue 26's "done when", through
// the real binary: against a fake Ollama whose /api/show says the model
// runs with 8,192 tokens (and which refuses past them), with 47 MCP tools
// and no context_window set, 20 `otter -c -p` turns all answer, none
// refused; /api/show is asked once (the window is cached); and the TUI's
// status line, continuing the conversation, shows the learned 8.2k
// without "?".
func TestTwentyTurnsOnALearnedOllamaWindow(t *testing.T) {
	t.Parallel()
	bin := testpeer.Otter(t)
	srv := llmtest.New(t, llmtest.OpenAI)
	srv.Host, srv.ContextWindow = llmtest.HostOllama, 8192
	srv.Models = []string{"fake-model"}
	srv.Info = map[string]llmtest.ModelInfo{"fake-model": {Window: 40960, Loaded: 8192}}
	answerNumbered(srv, func(n int) llmtest.Reply {
		return llmtest.Reply{Text: []string{fmt.Sprintf("Answer %d: ", n) + strings.Repeat("Sea otters hold hands while they sleep so that they do not drift apart. ", 12)}}
	})
	cfg := promptConfig(t, srv, fmt.Sprintf("\n[[mcp.servers]]\nname = \"tools47\"\nurl = %q\n", fortySevenTools(t)))
	env, home := testHomeEnv(t)
	for i := range 20 {
		args := []string{"--config", cfg, "-c", "-p", fmt.Sprintf("Question %d: tell me more about otters.", i+1)}
		if i == 0 {
			args = append(args[:2], args[3:]...)
		}
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, home
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), "Sea otters hold hands") {
			t.Fatalf("turn %d: %v\nstdout: %s\nstderr: %s", i+1, err, out, stderr.String())
		}
	}
	reqs := srv.Requests()
	tools := 0
	for i, r := range reqs {
		if r.Refused != "" {
			t.Errorf("request %d was refused: %s", i, r.Refused)
		}
		tools = max(tools, len(r.Tools))
	}
	if got := srv.HostCalls()["show fake-model"]; got != 1 {
		t.Errorf("/api/show asked %d times, want once (then the cache answers)", got)
	}
	t.Logf("%d requests, at most %d tools offered in one", len(reqs), tools)

	// The status line, continuing the conversation in the TUI.
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("tmux is not installed: run `make test-deps` (scripts/install-system-deps.sh) or `apt-get install -y tmux`")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "run.sh")
	var exports strings.Builder
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == "HOME" || strings.HasPrefix(k, "XDG_") || k == "PATH" {
			fmt.Fprintf(&exports, "export %q\n", kv)
		}
	}
	run := fmt.Sprintf("#!/bin/sh\ncd %q || exit 99\n%sexport TERM=xterm-256color\nexec %q --config %q -c\n", home, exports.String(), bin, cfg)
	if err := os.WriteFile(script, []byte(run), 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "tmux.sock")
	if out, err := exec.Command(tmux, "-S", sock, "new-session", "-d", "-s", "otter", "-x", "110", "-y", "30", script).CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })
	capture := func() string {
		out, _ := exec.Command(tmux, "-S", sock, "capture-pane", "-p", "-t", "otter").CombinedOutput()
		return string(out)
	}
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(capture(), "Continuing session") && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
	}
	// The share of the window is shown once a message has gone.
	if out, err := exec.Command(tmux, "-S", sock, "send-keys", "-t", "otter", "One more question about otters.", "Enter").CombinedOutput(); err != nil {
		t.Fatalf("tmux send-keys: %v\n%s", err, out)
	}
	var screen string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if screen = capture(); strings.Contains(screen, "of 8.2k") {
			break
		}
	}
	if !strings.Contains(screen, "of 8.2k") || strings.Contains(screen, "8.2k?") {
		t.Fatalf("the status line does not show the learned 8.2k window without \"?\":\n%s", screen)
	}
}
