package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/tool"
)

// permissionWriteHost is a fake Part whose server fs has write_file, a tool
// that is not read-only (so the agent asks before it runs), and a model
// that first says text (if any) and calls it with args.
func permissionWriteHost(text string, args []byte) *fakeHost {
	first := llmtest.Reply{Calls: []llmtest.Call{{ID: "1", Name: "mcp__fs__write_file", Args: string(args)}}}
	if text != "" {
		first.Text = []string{text}
	}
	return &fakeHost{
		tools:   []tool.Entry{entry("fs", "write_file", "Write a file", `{}`, nil)},
		replies: []llmtest.Reply{first},
	}
}

// permissionDenialSent reports whether the model was told that the person
// denied write_file, as the result of call 1; results are the tool
// results the model was sent, for the test's message.
func permissionDenialSent(b *fakeHost) (ok bool, results []llmtest.ToolResult) {
	for _, r := range b.model.Requests() {
		for _, res := range r.LastToolResults() {
			results = append(results, res)
			if res.CallID == "1" && res.IsError && strings.Contains(res.Text, "the user denied permission to run mcp__fs__write_file") {
				ok = true
			}
		}
	}
	return ok, results
}

// The permission prompt is a panel at the bottom: the chat stays in view
// above it, it says which answer Enter gives, ctrl+o shows every argument,
// the call's line says it waits for the person (not "running"), and a
// denied call's block says "denied", not "failed", once.
func TestPermissionPanelKeepsTheChatVisible(t *testing.T) {
	t.Parallel()
	args := map[string]string{}
	for i := range 12 {
		args[fmt.Sprintf("key%02d", i)] = fmt.Sprintf("value %d", i)
	}
	raw, _ := json.Marshal(args)
	b := permissionWriteHost("I will write the file now.", raw)
	b.replies = append(b.replies, llmtest.Reply{Text: []string{"I will not write it."}})
	h := start(t, b)
	// Where the agent saves an "Always allow" (the core's answer, which the
	// panel names).
	_, saveTo := b.app.Paths.PermissionsFile(b.app.WorkDir)
	h.enterLine("write the config")
	s := h.waitFor("Allow mcp__fs__write_file?", "› write the config", "I will write the file now.",
		"enter: Allow once (default)", "Always allow (saved to", saveTo+")", "ctrl+o all arguments", "key06", "Deny")
	if strings.Contains(s, "key11") {
		t.Errorf("the collapsed prompt shows every argument:\n%s", s)
	}
	if !strings.Contains(s, "waiting for your answer") || strings.Contains(s, "running") {
		t.Errorf("while the prompt is open the call's line does not say it waits for the person:\n%s", s)
	}
	// The panel is at the bottom: the chat is above it, and nothing but
	// the input and status bar is below it.
	lines := strings.Split(s, "\n")
	panelTop := -1
	for i, l := range lines {
		if strings.Contains(l, "Allow mcp__fs__write_file?") {
			panelTop = i
		}
	}
	if chat := strings.Index(s, "› write the config"); chat < 0 || panelTop < 3 || strings.Index(s, "Allow mcp__fs") < chat {
		t.Errorf("the chat is not above the permission panel:\n%s", s)
	}
	if blank := strings.Count(s, "│"+strings.Repeat(" ", 98)+"│"); blank > 2 {
		t.Errorf("the permission panel has %d empty rows:\n%s", blank, s)
	}
	h.press("ctrl+o")
	h.waitFor("key11", "lines 1–14 of 14", "back to the question")
	h.press("ctrl+o")
	h.waitFor("Always allow")
	h.press("esc")
	s = h.waitFor("✗ denied", "the user denied permission")
	if strings.Contains(s, "failed") {
		t.Errorf("a denied call shows as failed:\n%s", s)
	}
	if strings.Contains(s, "denied mcp__fs__write_file") {
		t.Errorf("the denial is said twice, on the call's line and in a notice:\n%s", s)
	}
	if b.did("call mcp__fs__write_file " + string(raw)) {
		t.Error("the denied call ran")
	}
	h.waitFor("I will not write it.") // the model's answer to the denial
	if ok, results := permissionDenialSent(b); !ok {
		t.Errorf("the model was not told of the denial; the tool results it got: %+v", results)
	}
}

// The sampling prompt defaults to Allow, as the permission prompt does,
// and says so; Esc denies.
func TestSamplingPromptDefaultIsAllow(t *testing.T) {
	t.Parallel()
	b := &fakeHost{}
	h := start(t, b)
	h.waitFor("/help")
	// A server's sampling/createMessage reaches the App's sampler (what
	// it handed the MCP client manager), which asks the UI.
	sample := b.opts.Sampler
	if sample == nil {
		t.Fatal("the App offers servers no sampling")
	}
	type answer struct {
		res *sdk.CreateMessageResult
		err error
	}
	done := make(chan answer, 1)
	ask := func() {
		go func() {
			res, err := sample(context.Background(), "everything", &sdk.CreateMessageParams{
				Messages:  []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "Summarise"}}},
				MaxTokens: 10,
			})
			done <- answer{res, err}
		}()
	}
	ask()
	h.waitFor("Allow this sampling request?", "enter: Allow (default)")
	h.press("enter")
	if a := recv(t, done, "sampling reply"); a.err != nil || a.res == nil {
		t.Errorf("enter did not allow the sampling request: %v", a.err)
	}
	if !b.did("send Summarise") {
		t.Errorf("the allowed sampling request did not reach the model; it got %q", b.sent())
	}
	asked := len(b.model.Requests())
	ask()
	h.waitFor("Allow this sampling request?")
	h.press("esc")
	if a := recv(t, done, "sampling reply"); !errors.Is(a.err, agent.ErrSamplingDeclined) {
		t.Errorf("esc allowed the sampling request: %+v, %v", a.res, a.err)
	}
	if n := len(b.model.Requests()); n != asked {
		t.Errorf("the declined sampling request reached the model (%d requests, want %d)", n, asked)
	}
}

// A permission panel that pops up while the person is typing does not take
// the rest of their sentence, and its Enter does not approve the call: the
// keys go on into the message, which Enter queues. Once they stop typing,
// the panel takes keys as usual.
func TestPermissionPanelDoesNotTakeKeysMidSentence(t *testing.T) {
	t.Parallel()
	// A PreToolUse hook holds the question back until the test opens its
	// gate (a FIFO the hook reads): the call's line shows, the person
	// starts typing, and then the panel pops up.
	gate := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	args := `{"path":"/tmp/x"}`
	b := permissionWriteHost("", []byte(args))
	b.config = fmt.Sprintf("[[hooks.PreToolUse]]\nmatcher = \"mcp__fs__write_file\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = %q\n",
		fmt.Sprintf("read -r line < '%s'; exit 0", gate))
	open := func() {
		opened := make(chan error, 1)
		go func() {
			f, err := os.OpenFile(gate, os.O_WRONLY, 0) // once the hook reads it
			if err == nil {
				_, err = f.WriteString("go\n")
				f.Close()
			}
			opened <- err
		}()
		if err := recv(t, opened, "the PreToolUse hook did not read its gate"); err != nil {
			t.Fatal(err)
		}
	}
	// The person types at human speed whatever the machine's load: the
	// clock moves only when they pause.
	clock := &fakeClock{}
	h := startModel(t, b, func(m *model) { m.now = clock.now })
	h.enterLine("write it")
	h.waitFor("mcp__fs__write_file")
	h.typeText("ok just")
	h.waitFor("› ok just")
	open()
	h.waitFor("Allow mcp__fs__write_file?")
	h.typeText(" do it")
	h.press("enter")
	// The Enter went into the message: it is queued, and the panel is
	// still there, unanswered.
	s := h.waitFor("queued › ok just do it")
	if !strings.Contains(s, "Allow mcp__fs__write_file?") || b.did("call mcp__fs__write_file "+args) || len(b.model.Requests()) != 1 {
		t.Fatalf("the Enter that ended the sentence answered the permission panel:\n%s", s)
	}
	clock.advance(typingPause + time.Millisecond)
	h.press("down", "down", "down", "enter") // after a pause: Deny
	h.waitFor("✗ denied")
	h.waitGone("Allow mcp__fs__write_file?")
	if b.did("call mcp__fs__write_file " + args) {
		t.Error("the panel's answer ran the call, want Deny")
	}
	if !b.waitDid("send ok just do it") {
		t.Errorf("the queued message was not sent after the turn; the model got %q", b.sent())
	}
	if ok, results := permissionDenialSent(b); !ok {
		t.Errorf("the panel's answer was not Deny: the model was not told of a denial; the tool results it got: %+v", results)
	}
}

// A call whose arguments are few but long (a file's whole content is one
// line of JSON) still offers ctrl+o, and ctrl+o shows the content whole:
// nobody should allow a write they cannot read.
func TestPermissionPanelShowsALongValueWhole(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := range 80 {
		lines = append(lines, fmt.Sprintf("line %02d of the file", i))
	}
	raw, _ := json.Marshal(map[string]string{"path": "/tmp/qa/notes.txt", "content": strings.Join(lines, "\n")})
	b := permissionWriteHost("", raw)
	h := start(t, b)
	h.waitFor("/help")
	h.tm.Send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.enterLine("write the notes")
	h.waitFor("Allow mcp__fs__write_file?", "ctrl+o all arguments")
	h.press("ctrl+o")
	s := h.waitFor("lines 1–")
	if !strings.Contains(s, "line 00 of the file") {
		t.Errorf("ctrl+o does not show the content:\n%s", s)
	}
	for range 8 {
		h.press("pgdown")
	}
	h.waitFor("line 79 of the file")
}
