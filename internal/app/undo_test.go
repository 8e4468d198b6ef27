package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// These tests run a real App over a real session store, with real files in
// a temporary project: the fake model calls the local tools, the
// Conversation keeps the files before they change, and Undo and Rewind put
// them back.

// allowAll answers every permission question with "allow once".
type allowAll struct{}

func (allowAll) ApproveTool(context.Context, ask.Permission) (ask.PermissionDecision, error) {
	return ask.AllowOnce, nil
}

func (allowAll) ApproveSampling(context.Context, ask.Sampling) (bool, error) { return false, nil }

// undoProject is an App whose model plays replies, in a project of files,
// and a conversation in it that allows every tool call.
type undoProject struct {
	t     *testing.T
	dir   string // the project, its links resolved
	app   *App
	model *llmtest.Server
	conv  *Conversation
	ctx   context.Context
}

func newUndoProject(t *testing.T, files map[string]string, replies ...llmtest.Reply) *undoProject {
	t.Helper()
	model := llmtest.New(t, llmtest.OpenAI, replies...)
	a := convApp(t, model, "")
	dir, err := filepath.EvalSymlinks(a.WorkDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	p := &undoProject{t: t, dir: dir, app: a, model: model, ctx: ctx}
	for name, text := range files {
		p.write(name, text)
	}
	p.conv = p.open(SessionOptions{})
	return p
}

func (p *undoProject) open(o SessionOptions) *Conversation {
	p.t.Helper()
	c, err := p.app.NewConversation(p.ctx, ConversationOptions{Approver: allowAll{}, Session: o})
	if err != nil {
		p.t.Fatal(err)
	}
	return c
}

func (p *undoProject) path(name string) string { return filepath.Join(p.dir, name) }

func (p *undoProject) write(name, text string) {
	p.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p.path(name)), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(p.path(name), []byte(text), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// read is the file's content, or "<none>" when there is no file.
func (p *undoProject) read(name string) string {
	p.t.Helper()
	b, err := os.ReadFile(p.path(name))
	if errors.Is(err, os.ErrNotExist) {
		return "<none>"
	}
	if err != nil {
		p.t.Fatal(err)
	}
	return string(b)
}

func (p *undoProject) send(c *Conversation, text string) {
	p.t.Helper()
	if err := c.Send(p.ctx, text, nil); err != nil {
		p.t.Fatalf("send %q: %v", text, err)
	}
}

func (p *undoProject) messages(c *Conversation) []UserMessage {
	p.t.Helper()
	msgs, err := c.UserMessages(p.ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	return msgs
}

// texts are the texts of the conversation's messages as the model is sent
// them.
func texts(c *Conversation) []string {
	var out []string
	for _, m := range c.Messages() {
		out = append(out, string(m.Role)+":"+m.Text)
	}
	return out
}

func call(id, name, args string) llmtest.Reply {
	return llmtest.Reply{Calls: []llmtest.Call{{ID: id, Name: name, Args: args}}}
}

func text(s string) llmtest.Reply { return llmtest.Reply{Text: []string{s}} }

func readArgs(name string) string { return fmt.Sprintf(`{"path":%q}`, name) }

func editArgs(name, old, new string) string {
	return fmt.Sprintf(`{"path":%q,"old_string":%q,"new_string":%q}`, name, old, new)
}

func writeArgs(name, content string) string {
	return fmt.Sprintf(`{"path":%q,"content":%q}`, name, content)
}

// /undo after a turn that edited one file and created another: the edit
// is put back, the new file deleted, and the turn leaves the conversation —
// the session and what the model is sent next.
func TestUndoPutsBackAnEditAndDeletesACreatedFile(t *testing.T) {
	p := newUndoProject(t, map[string]string{"a.txt": "one\n"},
		text("hello to you"),
		call("r1", "read_file", readArgs("a.txt")),
		llmtest.Reply{Calls: []llmtest.Call{
			{ID: "e1", Name: "edit_file", Args: editArgs("a.txt", "one", "two")},
			{ID: "w1", Name: "write_file", Args: writeArgs("sub/b.txt", "new file\n")},
		}},
		text("done"),
		text("back again"),
	)
	p.send(p.conv, "hello")
	p.send(p.conv, "change the files")
	if p.read("a.txt") != "two\n" || p.read("sub/b.txt") != "new file\n" {
		t.Fatalf("the turn did not change the files: a.txt %q, sub/b.txt %q", p.read("a.txt"), p.read("sub/b.txt"))
	}
	msgs := p.messages(p.conv)
	if len(msgs) != 2 || msgs[1].Text != "change the files" || !slices.Equal(msgs[1].Files, []string{p.path("a.txt"), p.path("sub/b.txt")}) ||
		len(msgs[0].Files) != 0 || msgs[1].Commands != 0 {
		t.Fatalf("UserMessages = %+v", msgs)
	}

	r, err := p.conv.Undo(p.ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Conversation || r.To.Text != "change the files" || !slices.Equal(r.Restored, []string{p.path("a.txt")}) ||
		!slices.Equal(r.Removed, []string{p.path("sub/b.txt")}) || r.Commands != 0 {
		t.Errorf("Undo = %+v", r)
	}
	if p.read("a.txt") != "one\n" || p.read("sub/b.txt") != "<none>" {
		t.Errorf("after undo: a.txt %q, sub/b.txt %q", p.read("a.txt"), p.read("sub/b.txt"))
	}
	if got := texts(p.conv); !slices.Equal(got, []string{"user:hello", "assistant:hello to you"}) {
		t.Errorf("the model's conversation after undo = %q", got)
	}
	if len(r.Entries) != 2 {
		t.Errorf("the saved conversation after undo has %d rows, want 2", len(r.Entries))
	}
	if msgs := p.messages(p.conv); len(msgs) != 1 || msgs[0].Text != "hello" {
		t.Errorf("UserMessages after undo = %+v", msgs)
	}

	p.send(p.conv, "and now?")
	reqs := p.model.Requests()
	var sent []string
	for _, m := range reqs[len(reqs)-1].Messages {
		sent = append(sent, m.Role+":"+m.Text)
	}
	if !slices.Equal(sent, []string{"user:hello", "assistant:hello to you", "user:and now?"}) {
		t.Errorf("after undo the model was sent %q", sent)
	}
	// The saved session holds the same: resumed, it is the conversation
	// without the turn.
	c2 := p.open(SessionOptions{Continue: true})
	if _, entries := c2.Resumed(); len(entries) != 4 || entries[2].ShownText() != "and now?" {
		t.Errorf("resumed after undo: %+v", entries)
	}
}

// A file changed on disk since the turn is not put back (that would lose
// the change), and nothing else is: the error names it. Forced, it is.
func TestUndoRefusesAFileChangedOnDiskUnlessForced(t *testing.T) {
	p := newUndoProject(t, map[string]string{"a.txt": "one\n", "b.txt": "bee\n"},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "r1", Name: "read_file", Args: readArgs("a.txt")}, {ID: "r2", Name: "read_file", Args: readArgs("b.txt")}}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "e1", Name: "edit_file", Args: editArgs("a.txt", "one", "two")}, {ID: "e2", Name: "edit_file", Args: editArgs("b.txt", "bee", "wasp")}}},
		text("done"),
	)
	p.send(p.conv, "edit both")
	p.write("a.txt", "two, and my own line\n")

	_, err := p.conv.Undo(p.ctx, false)
	var changed *ChangedOnDiskError
	if !errors.As(err, &changed) || !slices.Equal(changed.Paths, []string{p.path("a.txt")}) {
		t.Fatalf("Undo = %v; want a *ChangedOnDiskError naming a.txt", err)
	}
	if !strings.Contains(err.Error(), p.path("a.txt")) || !strings.Contains(err.Error(), "nothing was undone") {
		t.Errorf("the error says %q", err)
	}
	if p.read("a.txt") != "two, and my own line\n" || p.read("b.txt") != "wasp\n" || len(p.messages(p.conv)) != 1 {
		t.Errorf("a refused undo changed something: a.txt %q, b.txt %q, %d messages", p.read("a.txt"), p.read("b.txt"), len(p.messages(p.conv)))
	}

	r, err := p.conv.Undo(p.ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if p.read("a.txt") != "one\n" || p.read("b.txt") != "bee\n" || len(r.Restored) != 2 || len(p.conv.Messages()) != 0 {
		t.Errorf("forced undo: a.txt %q, b.txt %q, %+v, %d messages left", p.read("a.txt"), p.read("b.txt"), r, len(p.conv.Messages()))
	}
	if _, err := p.conv.Undo(p.ctx, false); !errors.Is(err, ErrNothingToUndo) {
		t.Errorf("undo of an empty conversation: %v", err)
	}
}

// A link put where a changed file stood, or where its folder stood, is not
// written through by undo, forced or not: the file it leads to (outside
// the project) stays as it was, and the error says which link.
func TestUndoDoesNotWriteThroughALink(t *testing.T) {
	for _, where := range []string{"file", "folder"} {
		t.Run(where, func(t *testing.T) {
			p := newUndoProject(t, map[string]string{"sub/a.txt": "one\n"},
				llmtest.Reply{Calls: []llmtest.Call{{ID: "r1", Name: "read_file", Args: readArgs("sub/a.txt")}}},
				llmtest.Reply{Calls: []llmtest.Call{{ID: "e1", Name: "edit_file", Args: editArgs("sub/a.txt", "one", "two")}}},
				text("done"),
			)
			p.send(p.conv, "edit it")
			outside := t.TempDir()
			victim := filepath.Join(outside, "a.txt")
			if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			link := p.path("sub/a.txt")
			if where == "folder" {
				link = p.path("sub")
			}
			if err := os.RemoveAll(link); err != nil {
				t.Fatal(err)
			}
			target := victim
			if where == "folder" {
				target = outside
			}
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			for _, force := range []bool{false, true} {
				_, err := p.conv.Undo(p.ctx, force)
				var linked *LinkedError
				if !errors.As(err, &linked) || linked.Link != link {
					t.Fatalf("Undo(force %v) = %v; want a *LinkedError naming %s", force, err, link)
				}
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
				t.Errorf("undo wrote through the link: %s holds %q", victim, b)
			}
			if len(p.messages(p.conv)) != 1 {
				t.Errorf("a refused undo took the turn back")
			}
		})
	}
}

// /rewind: the files alone back to before the second message (the
// conversation stays, and says nothing more is kept of those turns); the
// conversation alone back to before the third (the files stay); both back
// to before the first. A turn that ran a command is counted.
func TestRewindRestoresFilesConversationOrBoth(t *testing.T) {
	p := newUndoProject(t, map[string]string{"a.txt": "one\n"},
		call("r1", "read_file", readArgs("a.txt")),
		call("e1", "edit_file", editArgs("a.txt", "one", "two")),
		text("first done"),
		llmtest.Reply{Calls: []llmtest.Call{{ID: "e2", Name: "edit_file", Args: editArgs("a.txt", "two", "three")}, {ID: "w1", Name: "write_file", Args: writeArgs("c.txt", "sea\n")}}},
		text("second done"),
		call("x1", "run_command", `{"command":"echo hi"}`),
		text("third done"),
	)
	p.send(p.conv, "first")
	p.send(p.conv, "second")
	p.send(p.conv, "third")
	msgs := p.messages(p.conv)
	if len(msgs) != 3 || !slices.Equal(msgs[0].Files, []string{p.path("a.txt")}) || !slices.Equal(msgs[1].Files, []string{p.path("a.txt"), p.path("c.txt")}) ||
		len(msgs[2].Files) != 0 || msgs[2].Commands != 1 || msgs[0].Time.IsZero() {
		t.Fatalf("UserMessages = %+v", msgs)
	}

	r, err := p.conv.Rewind(p.ctx, msgs[1].Seq, RestoreFiles, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Conversation || r.Commands != 1 || p.read("a.txt") != "two\n" || p.read("c.txt") != "<none>" {
		t.Errorf("files back to before the second: %+v, a.txt %q, c.txt %q", r, p.read("a.txt"), p.read("c.txt"))
	}
	after := p.messages(p.conv)
	if len(after) != 3 || len(after[1].Files) != 0 || len(texts(p.conv)) != 14 {
		t.Errorf("after a rewind of files only: %+v, the model's conversation %q", after, texts(p.conv))
	}

	r, err = p.conv.Rewind(p.ctx, msgs[2].Seq, RestoreConversation, false)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Conversation || r.Commands != 1 || len(r.Restored)+len(r.Removed) != 0 || p.read("a.txt") != "two\n" || len(p.messages(p.conv)) != 2 {
		t.Errorf("conversation back to before the third: %+v, a.txt %q", r, p.read("a.txt"))
	}

	r, err = p.conv.Rewind(p.ctx, msgs[0].Seq, RestoreBoth, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Restored, []string{p.path("a.txt")}) || p.read("a.txt") != "one\n" || len(p.conv.Messages()) != 0 || len(p.messages(p.conv)) != 0 {
		t.Errorf("both back to before the first: %+v, a.txt %q, %d messages", r, p.read("a.txt"), len(p.conv.Messages()))
	}
	if _, err := p.conv.Rewind(p.ctx, msgs[2].Seq, RestoreBoth, false); !errors.Is(err, ErrNoSuchMessage) {
		t.Errorf("a rewind to a message taken out: %v", err)
	}
}

// A conversation continued in a new otter (otter -c) can still undo what
// the last one changed.
func TestUndoAfterResume(t *testing.T) {
	p := newUndoProject(t, map[string]string{"a.txt": "one\n"},
		call("r1", "read_file", readArgs("a.txt")),
		call("w1", "write_file", writeArgs("a.txt", "rewritten\n")),
		text("done"),
		text("still here"),
	)
	p.send(p.conv, "rewrite it")
	if p.read("a.txt") != "rewritten\n" {
		t.Fatalf("a.txt = %q", p.read("a.txt"))
	}
	resumed := p.open(SessionOptions{Continue: true})
	if info, _ := resumed.Resumed(); info.ID != p.conv.SessionID() {
		t.Fatalf("continued %q, want %q", info.ID, p.conv.SessionID())
	}
	r, err := resumed.Undo(p.ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if p.read("a.txt") != "one\n" || !slices.Equal(r.Restored, []string{p.path("a.txt")}) || len(resumed.Messages()) != 0 {
		t.Errorf("undo after resume: %+v, a.txt %q, %d messages", r, p.read("a.txt"), len(resumed.Messages()))
	}
	p.send(resumed, "hello again")
	if got := p.model.Requests(); len(got[len(got)-1].Messages) != 1 {
		t.Errorf("after undo the model was sent %+v", got[len(got)-1].Messages)
	}
}

// A file larger than otter keeps for undo is not changed: the model is
// told why, and the file is as it was.
func TestAFileTooLargeToUndoIsNotChanged(t *testing.T) {
	big := "the first line\n" + strings.Repeat("0123456789abcdef\n", MaxUndoBytes/17+100)
	p := newUndoProject(t, map[string]string{"big.txt": big},
		call("r1", "read_file", `{"path":"big.txt","limit":2}`),
		call("e1", "edit_file", editArgs("big.txt", "the first line", "x")),
		text("could not"),
	)
	p.send(p.conv, "shorten it")
	if p.read("big.txt") != big {
		t.Error("a file too large to undo was changed")
	}
	var got string
	for _, r := range p.model.Requests() {
		for _, m := range r.Messages {
			for _, tr := range m.ToolResults {
				if tr.CallID == "e1" {
					got = tr.Text
				}
			}
		}
	}
	if !strings.Contains(got, "was left as it was") || !strings.Contains(got, "otter keeps at most 4.0 MiB of a file to undo a change") {
		t.Errorf("the model was told %q", got)
	}
}

// Saving off, nothing is kept: the change is made, and undo says why it
// cannot take it back.
func TestUndoWithoutASavedConversation(t *testing.T) {
	model := llmtest.New(t, llmtest.OpenAI, text("hi"))
	a := convApp(t, model, "[sessions]\nenabled = false\n")
	c, err := a.NewConversation(context.Background(), ConversationOptions{Approver: allowAll{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send(context.Background(), "hello", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Undo(context.Background(), false); !errors.Is(err, ErrNotUndoable) {
		t.Errorf("undo with saving off: %v", err)
	}
}

// While a turn runs, nothing is taken back: Undo and Rewind say the
// conversation is busy.
func TestUndoWaitsForTheTurn(t *testing.T) {
	hold := make(chan struct{})
	p := newUndoProject(t, nil, text("first"), llmtest.Reply{Text: []string{"still ", "going"}, Hold: hold})
	p.send(p.conv, "one")
	done := make(chan error, 1)
	go func() { done <- p.conv.Send(p.ctx, "two", nil) }()
	for !p.conv.running() {
		select {
		case err := <-done:
			t.Fatalf("the turn ended before it was seen running: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	if _, err := p.conv.Undo(p.ctx, false); !errors.Is(err, agent.ErrBusy) {
		t.Errorf("undo while a turn runs: %v", err)
	}
	if _, err := p.conv.Rewind(p.ctx, 1, RestoreBoth, false); !errors.Is(err, agent.ErrBusy) {
		t.Errorf("rewind while a turn runs: %v", err)
	}
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if msgs := p.messages(p.conv); len(msgs) != 2 {
		t.Errorf("the conversation has %d messages of the person's after a refused undo, want 2", len(msgs))
	}
}
