package tui

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// Issue 38's undo and rewind through the real binary in tmux: the fake
// model calls edit_file in the pane's working directory, the person
// answers the permission panel, and /undo and /rewind put the files back.

// file writes a file in the pane's working directory.
func (p *tmuxPane) file(name, text string) string {
	p.t.Helper()
	path := filepath.Join(p.work, name)
	writeTestFile(p.t, path, text, 0o644)
	return path
}

// The permission panel shows the edit's diff; allowed, the file changes
// and the block folds the diff; /undo puts the file back and takes the
// turn out of the transcript.
func TestUndoAnEditInTmux(t *testing.T) {
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "r1", Name: "read_file", Args: `{"path":"notes.txt"}`}}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "e1", Name: "edit_file", Args: `{"path":"notes.txt","old_string":"beta","new_string":"BETA"}`}}},
		llmtest.Reply{Text: []string{"Changed beta."}},
	)
	p := startTmux(t, dir, fakeModelConfig(model.URL), 100, 40)
	notes := p.file("notes.txt", "alpha\nbeta\ngamma\n")
	p.waitFor("fake/fake-model")
	p.keys("shout beta", "Enter")
	p.waitFor("Allow edit_file?", "--- a/notes.txt", "-beta", "+BETA", "Allow edits for this session", "ctrl+o the whole diff")
	p.keys("Enter")
	p.waitFor("Changed beta.", "Edited notes.txt", "+1 -1", "(ctrl+o shows the diff)")
	if got := readTestFile(t, notes); got != "alpha\nBETA\ngamma\n" {
		t.Fatalf("notes.txt = %q after the edit", got)
	}
	p.waitGone("esc cancels") // the turn is over
	p.keys("/undo", "Enter")
	s := p.waitForWords("The conversation and its files are back to before “shout beta”. Put back: notes.txt.")
	if got := readTestFile(t, notes); got != "alpha\nbeta\ngamma\n" {
		t.Errorf("notes.txt = %q after /undo", got)
	}
	if strings.Contains(s, "Changed beta.") {
		t.Errorf("the undone turn is still in the transcript:\n%s", s)
	}
	p.quit()
}

// /rewind to the earlier of two messages, conversation and files: the file
// is as it was before it, the transcript and what the model is sent next
// hold neither turn.
func TestRewindInTmux(t *testing.T) {
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "r1", Name: "read_file", Args: `{"path":"a.txt"}`}}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "e1", Name: "edit_file", Args: `{"path":"a.txt","old_string":"one","new_string":"two"}`}}},
		llmtest.Reply{Text: []string{"First edit done."}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "w1", Name: "write_file", Args: `{"path":"b.txt","content":"bee\n"}`}}},
		llmtest.Reply{Text: []string{"Second file written."}},
		llmtest.Reply{Text: []string{"Starting over."}},
	)
	p := startTmux(t, dir, fakeModelConfig(model.URL), 100, 40)
	a := p.file("a.txt", "one\n")
	b := filepath.Join(p.work, "b.txt")
	p.waitFor("fake/fake-model")
	p.keys("first change", "Enter")
	p.waitFor("Allow edit_file?", "Allow edits for this session")
	p.keys("Down", "Enter") // edits for this session: write_file runs without asking
	p.waitFor("First edit done.")
	p.waitGone("esc cancels")
	p.keys("second change", "Enter")
	p.waitFor("Second file written.")
	p.waitGone("esc cancels")
	if readTestFile(t, a) != "two\n" || readTestFile(t, b) != "bee\n" {
		t.Fatalf("a.txt %q, b.txt %q after the turns", readTestFile(t, a), readTestFile(t, b))
	}

	p.keys("/rewind", "Enter")
	p.waitFor("Rewind to before a message", "› second change", "first change")
	p.keys("Down", "Enter")
	p.waitFor("Rewind to before “first change”", "Conversation and files", "Files only")
	p.keys("Enter")
	s := p.waitForWords("The conversation and its files are back to before “first change”.")
	if readTestFile(t, a) != "one\n" || readTestFile(t, b) != "<none>" {
		t.Errorf("after /rewind: a.txt %q, b.txt %q", readTestFile(t, a), readTestFile(t, b))
	}
	if strings.Contains(s, "First edit done.") || strings.Contains(s, "Second file written.") {
		t.Errorf("the turns rewound over are still in the transcript:\n%s", s)
	}
	p.keys("start over", "Enter")
	p.waitFor("Starting over.")
	reqs := model.Requests()
	if msgs := reqs[len(reqs)-1].Messages; len(msgs) != 1 || msgs[0].Text != "start over" {
		t.Errorf("after /rewind the model was sent %+v", msgs)
	}
	p.quit()
}

// A conversation continued with otter -c can undo what the last otter's
// turn changed.
func TestUndoAfterContinueInTmux(t *testing.T) {
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "w1", Name: "write_file", Args: `{"path":"new.txt","content":"fresh\n"}`}}},
		llmtest.Reply{Text: []string{"Wrote it."}},
	)
	p := startTmux(t, dir, fakeModelConfig(model.URL), 100, 40)
	created := filepath.Join(p.work, "new.txt")
	p.waitFor("fake/fake-model")
	p.keys("write a file", "Enter")
	p.waitFor("Allow write_file?", "--- /dev/null", "+fresh")
	p.keys("Enter")
	p.waitFor("Wrote it.")
	if readTestFile(t, created) != "fresh\n" {
		t.Fatalf("new.txt = %q", readTestFile(t, created))
	}
	p.quit()

	p.restart(dir, "-c")
	p.waitFor("Continuing session", "Wrote it.")
	p.keys("/undo", "Enter")
	s := p.waitForWords("The conversation and its files are back to before “write a file”. Deleted, as they were new: new.txt.")
	if readTestFile(t, created) != "<none>" {
		t.Errorf("new.txt is still there after /undo")
	}
	if strings.Contains(s, "Wrote it.") {
		t.Errorf("the undone turn is still in the transcript:\n%s", s)
	}
	p.quit()
}
