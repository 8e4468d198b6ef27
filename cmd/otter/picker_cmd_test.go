package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// TestPromptResumeWithoutIDIsAnError: the TUI picks a session for -r
// without an ID, a script cannot: with -p it exits 2, says what to give
// instead, and sends the model nothing.
func TestPromptResumeWithoutIDIsAnError(t *testing.T) {
	configTestHome(t)
	srv := llmtest.New(t, llmtest.OpenAI)
	cfg := promptConfig(t, srv, "")
	_, _, err := otterWithStdin(t, strings.NewReader(""), "--config", cfg, "-p", "hello", "-r")
	wantExit(t, err, 2)
	if msg := err.Error(); !strings.Contains(msg, "--resume needs the session's ID") || !strings.Contains(msg, "--continue") {
		t.Errorf("the error does not say what to give: %s", msg)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model got %d requests", n)
	}
}

// TestResumeWithAnEmptyIDIsAnError: `otter -r "$SID" -p …` with $SID empty
// exits 2 and says the ID is empty, as for an unknown ID, and sends the
// model nothing. (Before, it started a new conversation and exited 0.)
func TestResumeWithAnEmptyIDIsAnError(t *testing.T) {
	configTestHome(t)
	srv := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"hi"}})
	cfg := promptConfig(t, srv, "")
	for _, args := range [][]string{{"-r", ""}, {"-r", " "}, {"--resume="}, {"--resume", ""}} {
		_, _, err := otterWithStdin(t, strings.NewReader(""), append([]string{"--config", cfg, "-p", "follow-up"}, args...)...)
		wantExit(t, err, 2)
		if !strings.Contains(err.Error(), "the session ID is empty") {
			t.Errorf("%q: the error does not say the ID is empty: %v", args, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model got %d requests", n)
	}
}

// TestPromptRefusesAnUnknownSessionBeforeStartingServers: `otter -r nosuch
// -p …` exits 2 saying the ID names no session without starting the
// configured servers — so a server that hangs does not hold the answer up
// for its startup_timeout (before, it waited 15 s here, then refused).
func TestPromptRefusesAnUnknownSessionBeforeStartingServers(t *testing.T) {
	configTestHome(t)
	srv := llmtest.New(t, llmtest.OpenAI)
	started := filepath.Join(t.TempDir(), "started")
	cfg := promptConfig(t, srv, fmt.Sprintf(`
[[mcp.servers]]
name = "hung"
command = "sh"
args = ["-c", "touch %s; exec sleep 300"]
startup_timeout = "15s"
`, started))
	// (-c with nothing saved starts a new conversation: see
	// TestContinueWithNothingSavedStartsFresh.)
	for _, args := range [][]string{{"-r", "nosuch"}} {
		_, _, err := otterWithStdin(t, strings.NewReader(""), append([]string{"--cwd", t.TempDir(), "--config", cfg, "-p", "hi"}, args...)...)
		wantExit(t, err, 2)
		if _, serr := os.Stat(started); serr == nil {
			t.Fatalf("%q: the server was started before the session was refused (%v)", args, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model got %d requests", n)
	}
}

// TestPromptSaysWhichServersItWaitsFor: `otter -p` waits for a server that
// does not answer for at most its startup_timeout, says on stderr which
// server it waits for and how long at most, then answers without it and
// says why it is missing.
func TestPromptSaysWhichServersItWaitsFor(t *testing.T) {
	configTestHome(t)
	srv := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"hi"}})
	cfg := promptConfig(t, srv, `
[[mcp.servers]]
name = "hung"
command = "sleep"
args = ["300"]
startup_timeout = "3s"
`)
	stdout, stderr, err := otterWithStdin(t, strings.NewReader(""), "--cwd", t.TempDir(), "--config", cfg, "-p", "hi")
	if err != nil || stdout != "hi\n" {
		t.Fatalf("otter -p: %q, %v\n%s", stdout, err, stderr)
	}
	for _, want := range []string{"otter: waiting for MCP servers to start, so that the model is offered their tools: hung (at most 3s)",
		"otter: MCP server hung failed: no answer to initialize within 3s"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
