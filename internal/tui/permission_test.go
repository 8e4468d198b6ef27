//go:build seamwip

package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/ask"
)

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
	var h *harness
	b := &fakeHost{}
	b.send = func(ctx context.Context, text string, emit func(agent.Event)) error {
		emit(agent.TextDelta{Text: "I will write the file now."})
		emit(agent.ToolCallStarted{ID: "1", Name: "mcp__fs__write_file", Args: raw})
		d, err := h.ui.ApproveTool(ctx, ask.Permission{Tool: "mcp__fs__write_file", Server: "fs",
			Arguments: raw, SaveTo: "~/.config/otter/config.toml"})
		if err != nil {
			return err
		}
		if d == ask.Deny {
			emit(agent.ToolCallFinished{ID: "1", Name: "mcp__fs__write_file",
				Err: fmt.Errorf("%w: the user denied permission to run mcp__fs__write_file", agent.ErrDenied)})
		}
		emit(agent.TurnFinished{Text: "I will write the file now."})
		return nil
	}
	h = start(t, b)
	h.enterLine("write the config")
	s := h.waitFor("Allow mcp__fs__write_file?", "› write the config", "I will write the file now.",
		"enter: Allow once (default)", "Always allow (saved to ~/.config/otter/config.toml)", "ctrl+o all arguments", "key06", "Deny")
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
}

// The sampling prompt defaults to Allow, as the permission prompt does,
// and says so; Esc denies.
func TestSamplingPromptDefaultIsAllow(t *testing.T) {
	t.Parallel()
	h := start(t, &fakeHost{})
	h.waitFor("/help")
	done := make(chan bool, 1)
	ask := func() {
		go func() {
			ok, _ := h.ui.ApproveSampling(context.Background(), ask.Sampling{Server: "everything", Messages: []string{"Summarise"}, MaxTokens: 10})
			done <- ok
		}()
	}
	ask()
	h.waitFor("Allow this sampling request?", "enter: Allow (default)")
	h.press("enter")
	if ok := recv(t, done, "sampling reply"); !ok {
		t.Error("enter did not allow the sampling request")
	}
	ask()
	h.waitFor("Allow this sampling request?")
	h.press("esc")
	if ok := recv(t, done, "sampling reply"); ok {
		t.Error("esc allowed the sampling request")
	}
}

// A permission panel that pops up while the person is typing does not take
// the rest of their sentence, and its Enter does not approve the call: the
// keys go on into the message, which Enter queues. Once they stop typing,
// the panel takes keys as usual.
func TestPermissionPanelDoesNotTakeKeysMidSentence(t *testing.T) {
	t.Parallel()
	var h *harness
	gate := make(chan struct{})
	decided := make(chan ask.PermissionDecision, 1)
	b := &fakeHost{}
	b.send = func(ctx context.Context, text string, emit func(agent.Event)) error {
		if text != "write it" {
			return nil
		}
		emit(agent.ToolCallStarted{ID: "1", Name: "mcp__fs__write_file", Args: json.RawMessage(`{"path":"/tmp/x"}`)})
		<-gate
		d, err := h.ui.ApproveTool(ctx, ask.Permission{Tool: "mcp__fs__write_file", Server: "fs", Arguments: json.RawMessage(`{"path":"/tmp/x"}`)})
		decided <- d
		return err
	}
	// The person types at human speed whatever the machine's load: the
	// clock moves only when they pause.
	clock := &fakeClock{}
	h = startModel(t, b, b, func(m *model) { m.now = clock.now })
	h.enterLine("write it")
	h.waitFor("mcp__fs__write_file")
	h.typeText("ok just")
	h.waitFor("› ok just")
	close(gate)
	h.waitFor("Allow mcp__fs__write_file?")
	h.typeText(" do it")
	h.press("enter")
	h.waitFor("queued › ok just do it")
	select {
	case d := <-decided:
		t.Fatalf("the Enter that ended the sentence answered the permission panel: %v", d)
	case <-time.After(200 * time.Millisecond):
	}
	clock.advance(typingPause + time.Millisecond)
	h.press("down", "down", "down", "enter") // after a pause: Deny
	select {
	case d := <-decided:
		if d != ask.Deny {
			t.Errorf("the panel's answer = %v, want Deny", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the panel did not take keys after the person stopped typing")
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
	var h *harness
	b := &fakeHost{}
	b.send = func(ctx context.Context, text string, emit func(agent.Event)) error {
		emit(agent.ToolCallStarted{ID: "1", Name: "mcp__fs__write_file", Args: raw})
		_, err := h.ui.ApproveTool(ctx, ask.Permission{Tool: "mcp__fs__write_file", Server: "fs", Arguments: raw})
		return err
	}
	h = start(t, b)
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
