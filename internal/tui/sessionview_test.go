//go:build seamwip

package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/record"
	"github.com/otter-sh/otter/internal/tool"
)

// sessionFake saves conversations: each has its own use of the window,
// which the core reports once the TUI switches to it.
type sessionFake struct{ *fakeHost }

func (f sessionFake) setUsed(used int) {
	f.mu.Lock()
	f.ctxState = agent.ContextState{Window: 200_000, WindowKnown: true, Used: used}
	f.mu.Unlock()
}

func (f sessionFake) NewSession(context.Context) error {
	f.record("new")
	f.setUsed(0)
	return nil
}

func (f sessionFake) ForkSession(context.Context) (record.Info, error) {
	f.setUsed(40_000)
	return record.Info{ID: "bbbbbbbbbb", ParentID: "aaaaaaaaaa"}, nil
}

func (f sessionFake) RenameSession(context.Context, string) error { return nil }

func (f sessionFake) FindSessions(context.Context, string) ([]record.Found, error) { return nil, nil }

func (f sessionFake) ResumeSession(_ context.Context, id string) (record.Info, []record.Entry, error) {
	f.setUsed(100_000)
	return record.Info{ID: id + "cccccccc", Title: "otters", Messages: 8}, nil, nil
}

func (f sessionFake) SessionDir() string { return "" }

// The status bar's share of the window is the conversation's on screen:
// /new empties it, /resume and /fork show theirs, at once, without
// waiting for the next message.
func TestContextMeterFollowsTheConversation(t *testing.T) {
	t.Parallel()
	b := sessionFake{&fakeHost{}}
	b.send = func(ctx context.Context, text string, emit func(agent.Event)) error {
		b.setUsed(14_000)
		emit(agent.TurnFinished{Text: "ok"})
		return nil
	}
	h := startWith(t, b, b.fakeHost)
	h.enterLine("hello")
	h.waitFor("7% of 200k")
	h.enterLine("/new")
	h.waitFor("a new conversation")
	h.waitFor("0% of 200k")
	h.enterLine("/resume 12345678")
	h.waitFor("Continuing session 12345678", "50% of 200k")
	h.enterLine("/fork")
	h.waitFor("forked: you now continue", "20% of 200k")
}

// resumerFake continues a saved conversation.
type resumerFake struct {
	*fakeHost
	entries []record.Entry
}

func (f resumerFake) Resumed() (record.Info, []record.Entry, []string) {
	return record.Info{ID: "0123456789", Title: "notes", Messages: len(f.entries)}, f.entries, nil
}

// A resumed tool call shows the time it ran, as the live view did, not
// the time since the model asked for it (which includes the wait at the
// permission panel).
func TestResumedToolCallShowsTheTimeItRan(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	b := resumerFake{fakeHost: &fakeHost{}, entries: []record.Entry{
		{Time: t0, Message: llm.Message{Role: llm.RoleUser, Text: "write a note"}},
		{Time: t0, Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "write_note", Args: json.RawMessage(`{}`)}}}},
		{Time: t0.Add(7900 * time.Millisecond), Message: llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{
			{CallID: "c1", Name: "write_note", Text: "note written", Elapsed: 4100 * time.Millisecond}}}},
	}}
	h := startWith(t, b, b.fakeHost)
	s := h.waitFor("write_note", "✓ 4.1s")
	if strings.Contains(s, "7.9s") {
		t.Errorf("the resumed call counts the wait for permission:\n%s", s)
	}
}

// The live timer of a tool call runs from the moment it was allowed, as
// the finished and the resumed views count: the wait at the permission
// panel before is not the tool's time.
func TestLiveToolTimerStartsWhenAllowed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newModel(New(Options{}), &fakeHost{})
		m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		m.chatEvent(agent.ToolCallStarted{ID: "c1", Name: "write_note", Args: json.RawMessage(`{}`)})
		time.Sleep(5 * time.Second) // the person reads the permission panel
		m.chatEvent(agent.ToolCallRunning{ID: "c1"})
		time.Sleep(2 * time.Second)
		if s := ansi.Strip(m.render()); !strings.Contains(s, "running 2.0s") {
			t.Errorf("the live timer, 2s after the call was allowed:\n%s", s)
		}
		m.chatEvent(agent.ToolCallFinished{ID: "c1", Name: "write_note", Result: tool.TextResult("note written"), Elapsed: 2 * time.Second})
		if s := ansi.Strip(m.render()); !strings.Contains(s, "✓ 2.0s") {
			t.Errorf("the finished call:\n%s", s)
		}
		m.stop()
	})
}

func (f sessionFake) ExportSession(context.Context, string) (string, error) { return "", nil }
