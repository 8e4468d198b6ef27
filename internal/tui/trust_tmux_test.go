package tui

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

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
const notTrustedNotice = "is not trusted: its"

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

// Issue 35 point 9: the trust prompt otter opens at the start keeps "Not
// now" as Enter's choice and says which keys do what; /trust, typed by a
// person who wants to trust, makes Trust Enter's choice. Until then, the
// project's own command /review:pr says it is the untrusted project's and
// how to enable it, instead of "unknown command", and nothing reaches the
// model; once trusted, it runs.
func TestTrustPanelDefaultsAndTheUntrustedProjectsCommand(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	writeTestFile(t, filepath.Join(work, ".otter", "commands", "review", "pr.md"), "---\ndescription: Review a pull request\n---\nReview pull request #$1.\n", 0o644)
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Reviewed."}})
	p := startTmux(t, dir, fakeModelConfig(model.URL), 100, 30)
	p.waitFor("Trust this directory?", "command /review:pr", "enter: Not now", "y: Trust", "esc: Not now")
	p.keys("Enter") // the safe default at the start
	p.waitFor(notTrustedNotice)

	p.keys("/review:pr 42", "Enter")
	s := p.waitForWords("/review:pr is a command of the project " + work + ", which is not trusted; trusting the project enables it: /trust, or `otter trust` in that directory")
	if strings.Contains(s, "unknown command") {
		t.Errorf("the untrusted project's command is called unknown:\n%s", s)
	}

	p.keys("/trust", "Enter")
	p.waitFor("Trust this directory?", "enter: Trust")
	p.keys("Enter")
	p.waitFor("trusted "+work+"; starting", "config reloaded")
	p.keys("/review:pr 42", "Enter")
	p.waitFor("Reviewed.")
	reqs := model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the model got %d requests, want 1 (the command once trusted)", len(reqs))
	}
	if got := reqs[0].Messages[len(reqs[0].Messages)-1].Text; got != "Review pull request #42." {
		t.Errorf("sent %q, want the command's body", got)
	}
	p.quit()
}

// waitForWords waits until the pane shows want, wherever its lines wrap
// (between words, or inside a path after a "/"): white space is left out
// of the comparison.
func (p *tmuxPane) waitForWords(want string) string {
	p.t.Helper()
	flat := func(s string) string { return strings.Join(strings.Fields(s), "") }
	deadline := time.Now().Add(60 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		s = p.capture()
		if strings.Contains(flat(s), flat(want)) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.t.Fatalf("the pane never showed %q; last screen:\n%s", want, s)
	return ""
}
