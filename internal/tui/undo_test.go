package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// These tests run the TUI over a real App (the fake Part's) whose model
// calls the tools for the project in a temporary directory of real files;
// the session store is real, so /undo and /rewind act on what it kept.

// undoHost is a fakeHost whose working directory holds files.
func undoHost(t *testing.T, files map[string]string, replies ...llmtest.Reply) (*fakeHost, string) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		writeTestFile(t, filepath.Join(dir, name), text, 0o644)
	}
	return &fakeHost{workDir: dir, replies: replies}, dir
}

func readTestFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return "<none>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func toolCall(id, name, args string) llmtest.Reply {
	return llmtest.Reply{Calls: []llmtest.Call{{ID: id, Name: name, Args: args}}}
}

func editCall(id, path, old, new string) llmtest.Reply {
	return toolCall(id, "edit_file", fmt.Sprintf(`{"path":%q,"old_string":%q,"new_string":%q}`, path, old, new))
}

func answer(s string) llmtest.Reply { return llmtest.Reply{Text: []string{s}} }

// idle waits until the turn has ended: the status bar no longer says otter
// works.
func (h *harness) idle() { h.t.Helper(); h.waitGone("working · esc cancels") }

// The permission panel of an edit shows its diff, in colour, with "allow
// edits for this session"; the finished call's block folds the diff
// (ctrl+o unfolds it); /undo puts the file back and takes the turn out of
// the transcript.
func TestEditShowsItsDiffAndUndoPutsItBack(t *testing.T) {
	t.Parallel()
	b, dir := undoHost(t, map[string]string{"notes.txt": "alpha\nbeta\ngamma\n"},
		answer("Hello."),
		toolCall("r1", "read_file", `{"path":"notes.txt"}`),
		editCall("e1", "notes.txt", "beta", "BETA"),
		answer("Changed beta."),
	)
	h := start(t, b)
	h.enterLine("hello")
	h.waitFor("Hello.")
	h.idle()
	h.enterLine("shout beta")
	s := h.waitFor("Allow edit_file?", "--- a/notes.txt", "+++ b/notes.txt", "-beta", "+BETA", " alpha",
		"Allow edits for this session", "ctrl+o the whole diff")
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "│") && strings.Contains(l, "old_string") {
			t.Errorf("the panel shows the arguments as well as the diff:\n%s", s)
		}
	}
	h.press("enter")
	s = h.waitFor("Changed beta.", "Edited notes.txt", "+1 -1", "(ctrl+o shows the diff)")
	h.idle()
	if strings.Contains(s, "+BETA") {
		t.Errorf("the finished edit shows its diff unfolded:\n%s", s)
	}
	if got := readTestFile(t, filepath.Join(dir, "notes.txt")); got != "alpha\nBETA\ngamma\n" {
		t.Fatalf("notes.txt = %q after the edit", got)
	}
	h.press("ctrl+o")
	h.waitFor("-beta", "+BETA")
	h.press("ctrl+o")

	h.enterLine("/undo")
	s = h.waitFor("The conversation and its files are back to before “shout beta”.", "Put back: notes.txt.")
	if got := readTestFile(t, filepath.Join(dir, "notes.txt")); got != "alpha\nbeta\ngamma\n" {
		t.Errorf("notes.txt = %q after /undo", got)
	}
	if strings.Contains(s, "Changed beta.") || strings.Contains(s, "› shout beta") || !strings.Contains(s, "Hello.") {
		t.Errorf("after /undo the transcript still shows the turn, or lost the one before:\n%s", s)
	}
	h.enterLine("/undo")
	h.waitFor("The conversation is back to before “hello”.")
	h.enterLine("/undo")
	h.waitFor("nothing to undo: the conversation has no message of yours")
}

// /rewind lists the person's messages newest first with what their turns
// changed; "files only" puts the files back and keeps the conversation.
// A file changed on disk since is asked about: left alone, nothing
// changes; put back, it is.
func TestRewindPicksAMessageAndWhatToRestore(t *testing.T) {
	t.Parallel()
	b, dir := undoHost(t, map[string]string{"a.txt": "one\n"},
		toolCall("r1", "read_file", `{"path":"a.txt"}`),
		editCall("e1", "a.txt", "one", "two"),
		answer("First edit done."),
		editCall("e2", "a.txt", "two", "three"),
		answer("Second edit done."),
	)
	h := start(t, b)
	h.enterLine("first change")
	h.waitFor("Allow edit_file?")
	h.press("down", "enter") // allow edits for this session
	h.waitFor("First edit done.")
	h.idle()
	h.enterLine("second change")
	h.waitFor("Second edit done.")
	h.idle()
	a := filepath.Join(dir, "a.txt")
	if got := readTestFile(t, a); got != "three\n" {
		t.Fatalf("a.txt = %q", got)
	}

	// A file changed by hand since is asked about: left alone, nothing
	// changes.
	writeTestFile(t, a, "my own\n", 0o644)
	h.enterLine("/rewind")
	s := h.waitFor("Rewind to before a message", "› second change", "first change", "1 file")
	if strings.Index(s, "second change") > strings.Index(s, "  first change") {
		t.Errorf("the picker does not list the newest first:\n%s", s)
	}
	h.press("enter")
	h.waitFor("Rewind to before “second change”", "files otter changed since: a.txt", "Conversation and files", "Files only")
	h.press("enter")
	h.waitFor("1 file changed on disk since otter changed it:", "Put it back anyway?")
	h.press("enter") // leave it
	h.waitFor("nothing was undone")
	if got := readTestFile(t, a); got != "my own\n" {
		t.Errorf("a.txt = %q after leaving it", got)
	}

	// Files only, to before the first message, put back anyway.
	h.enterLine("/rewind")
	h.waitFor("› second change")
	h.press("down", "enter")
	h.waitFor("Rewind to before “first change”")
	h.press("down", "down", "enter")
	h.waitFor("Put it back anyway?")
	h.press("y")
	s = h.waitFor("The files are back as they were before “first change”; the conversation is kept.", "Put back: a.txt.")
	if got := readTestFile(t, a); got != "one\n" {
		t.Errorf("a.txt = %q after rewinding the files", got)
	}
	if !strings.Contains(s, "Second edit done.") {
		t.Errorf("rewinding the files took the conversation:\n%s", s)
	}
	// The files of those turns are back: undo takes the last turn out of
	// the conversation only.
	h.enterLine("/undo")
	s = h.waitFor("The conversation is back to before “second change”.", "No file was changed by otter's edits since")
	if strings.Contains(s, "Second edit done.") || !strings.Contains(s, "First edit done.") {
		t.Errorf("after /undo:\n%s", s)
	}
}

// /init sends app's built-in command: the model is asked to write
// AGENTS.md, and the transcript shows what was typed.
func TestInitAsksForAgentsMD(t *testing.T) {
	t.Parallel()
	b, _ := undoHost(t, nil, answer("Wrote AGENTS.md."))
	h := start(t, b)
	h.enterLine("/init")
	h.waitFor("› /init", "Wrote AGENTS.md.")
	sent := b.sent()
	if len(sent) != 1 || !strings.HasPrefix(sent[0], "Look at this project and write AGENTS.md") {
		t.Errorf("/init sent the model %q", sent)
	}
	h.enterLine("/help")
	h.waitFor("/undo", "/rewind", "/init")
}

// While otter works, /undo and /rewind wait, and say how to stop it.
func TestUndoAndRewindWaitForTheTurn(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	b, _ := undoHost(t, nil, llmtest.Reply{Text: []string{"thinking ", "hard"}, Hold: hold})
	h := start(t, b)
	h.enterLine("take your time")
	h.waitFor("thinking", "working · esc cancels")
	h.enterLine("/undo")
	h.waitFor("/undo waits until otter has finished: press esc to stop it first")
	h.enterLine("/rewind")
	h.waitFor("/rewind waits until otter has finished: press esc to stop it first")
	close(hold)
	h.waitFor("thinking hard")
	if s := h.screen(); strings.Contains(s, "Rewind to before a message") {
		t.Errorf("/rewind opened its picker while a turn ran:\n%s", s)
	}
}
