package tui

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// run_command's question shows the command and offers to allow, for the
// session, the commands that start as this one does — not every command;
// denied, nothing runs and the model is told.
func TestCommandPanelOffersItsPrefix(t *testing.T) {
	t.Parallel()
	b := &fakeHost{replies: []llmtest.Reply{
		{Calls: []llmtest.Call{{ID: "c1", Name: "run_command", Args: `{"command":"git status --short && touch made-it"}`}}},
		{Text: []string{"it was denied"}},
	}}
	h := start(t, b)
	h.enterLine("what changed?")
	h.waitWords("Allow run_command?", "git status --short && touch made-it",
		"Allow commands starting with git status, touch for this session", "Deny")
	h.press("esc")
	h.waitFor("it was denied")
	reqs := b.model.Requests()
	if res := reqs[len(reqs)-1].LastToolResults(); len(res) != 1 || !res[0].IsError {
		t.Errorf("the model was told %+v, want the refusal", res)
	}
	if _, err := os.Stat(filepath.Join(b.app.WorkDir, "made-it")); err == nil {
		t.Error("the denied command ran")
	}
}
