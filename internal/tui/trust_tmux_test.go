package tui

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// sessionStartProject writes an untrusted project whose SessionStart hook
// prints context for the model.
func sessionStartProject(t *testing.T, work string) {
	t.Helper()
	writeTestFile(t, filepath.Join(work, ".otter", "config.toml"), `
[[hooks.SessionStart]]
[[hooks.SessionStart.hooks]]
type = "command"
command = "echo 'context from the SessionStart hook'"
`, 0o644)
}

// notTrustedNotice is what the transcript says when the trust prompt is
// declined (the prompt itself says "is not trusted yet").
const notTrustedNotice = "is not trusted: its servers"

// Issue 35 point 8: trusting a project in the TUI after "Not now" runs its
// SessionStart hooks for the open session, as a fresh start would: what
// they print goes to the model with the next message.
func TestTrustLaterRunsSessionStart(t *testing.T) {
	dir := t.TempDir()
	sessionStartProject(t, filepath.Join(dir, "work"))
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Hello there."}})
	p := startTmux(t, dir, fakeModelConfig(model.URL), 100, 30)
	p.waitFor("Trust this directory?", "SessionStart")
	p.keys("Escape")
	p.waitFor(notTrustedNotice)
	p.keys("/trust", "Enter")
	p.waitFor("Trust this directory?")
	p.keys("y")
	p.waitFor("trusted "+filepath.Join(dir, "work")+"; starting", "config reloaded")
	p.keys("hello", "Enter")
	p.waitFor("Hello there.")
	reqs := model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the model got %d requests, want 1", len(reqs))
	}
	if got := reqs[0].Messages[len(reqs[0].Messages)-1].Text; !strings.Contains(got, "context from the SessionStart hook") {
		t.Errorf("the first message after /trust is %q; want the SessionStart hook's output with it", got)
	}
	p.quit()
}
