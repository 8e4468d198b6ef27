package tui

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/shellline"
	"github.com/otter-sh/otter/internal/tool"
)

// itemModel is a model with a 24-line screen and a turn under way, for
// feeding agent events.
func itemModel(t *testing.T) (*model, func(agent.Event)) {
	t.Helper()
	m := newTestModel(t, &fakeHost{}, Options{})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.turn = 1
	return m, func(ev agent.Event) { m.Update(chatEventMsg{turn: 1, ev: ev}) }
}

// A finished item renders once per width: drawing the screen again, or
// typing, reuses its lines; a new width renders it once more, and only
// once.
func TestFinishedItemRendersOncePerWidth(t *testing.T) {
	t.Parallel()
	m, ev := itemModel(t)
	ev(agent.TextDelta{Text: "The **answer** is 42.\n"})
	ev(agent.ToolCallStarted{ID: "1", Name: "echo", Args: json.RawMessage(`{"message":"hi"}`)})
	ev(agent.ToolCallFinished{ID: "1", Result: tool.TextResult("Echo: hi"), Elapsed: time.Millisecond})
	ev(agent.TurnFinished{})
	m.Update(turnDoneMsg{turn: 1})
	user := &userItem{text: "what is it?"}
	m.tr.add(user)
	items := append([]item(nil), m.tr.items...)

	renders := func() []int {
		var out []int
		for _, it := range items {
			out = append(out, it.cache().renders)
		}
		return out
	}
	screenOf(m)
	first := renders()
	for i, n := range first {
		if n != 1 {
			t.Fatalf("item %d (%T) rendered %d times for its first screen", i, items[i], n)
		}
	}
	for _, k := range "abc" {
		m.Update(tea.KeyPressMsg{Code: k, Text: string(k)})
		screenOf(m)
	}
	if got := renders(); !slices.Equal(got, first) {
		t.Errorf("finished items rendered again while nothing changed: renders %v, then %v", first, got)
	}

	m.Update(tea.WindowSizeMsg{Width: 60, Height: 24})
	s := screenOf(m)
	screenOf(m)
	for i, n := range renders() {
		if n != 2 {
			t.Errorf("item %d (%T) rendered %d times for two widths", i, items[i], n)
		}
	}
	for _, want := range []string{"The answer is 42.", "echo", "Echo: hi", "› what is it?"} {
		if !strings.Contains(s, want) {
			t.Errorf("at 60 columns %q is missing:\n%s", want, s)
		}
	}
}

// An unfinished item shows what arrives: a streaming answer its new text
// at the next frame, a running tool its progress, thinking its size; once
// finished, each is drawn whole and then kept.
func TestUnfinishedItemUpdatesAsDeltasArrive(t *testing.T) {
	t.Parallel()
	m, ev := itemModel(t)

	ev(agent.ThinkingDelta{Text: "let me see"})
	if s := screenOf(m); !strings.Contains(s, "✻ thinking… · 10 chars") {
		t.Errorf("the thinking does not show as it arrives:\n%s", s)
	}
	ev(agent.ThinkingDelta{Text: ", and more"})
	if s := screenOf(m); !strings.Contains(s, "✻ thinking… · 20 chars") {
		t.Errorf("the thinking does not grow as it arrives:\n%s", s)
	}

	ev(agent.TextDelta{Text: "First words"})
	if s := screenOf(m); !strings.Contains(s, "First words") || !strings.Contains(s, "✻ thinking · 20 chars") {
		t.Errorf("the answer's first words, or the finished thinking, do not show:\n%s", s)
	}
	ev(agent.TextDelta{Text: " and then some"})
	if s := screenOf(m); strings.Contains(s, "and then some") {
		t.Errorf("a delta showed before the frame it waits for:\n%s", s)
	}
	m.Update(frameMsg{})
	if s := screenOf(m); !strings.Contains(s, "First words and then some") {
		t.Errorf("the answer does not show its new text at the frame:\n%s", s)
	}

	ev(agent.ToolCallStarted{ID: "1", Name: "build", Args: json.RawMessage(`{}`)})
	ev(agent.ToolProgress{ID: "1", Progress: tool.Progress{Progress: 1, Total: 4, Message: "compiling"}})
	if s := screenOf(m); !strings.Contains(s, "compiling") || !strings.Contains(s, "running") {
		t.Errorf("the running tool does not show its progress:\n%s", s)
	}
	ev(agent.ToolProgress{ID: "1", Progress: tool.Progress{Progress: 3, Total: 4, Message: "linking"}})
	if s := screenOf(m); !strings.Contains(s, "linking") || strings.Contains(s, "compiling") {
		t.Errorf("the running tool does not show its new progress:\n%s", s)
	}
	ev(agent.ToolCallFinished{ID: "1", Result: tool.TextResult("built"), Elapsed: 2 * time.Second})
	s := screenOf(m)
	if !strings.Contains(s, "✓ 2.0s") || !strings.Contains(s, "⎿ built") || strings.Contains(s, "linking") {
		t.Errorf("the finished tool does not show its result:\n%s", s)
	}
	tl := m.tr.items[len(m.tr.items)-1]
	n := tl.cache().renders
	screenOf(m)
	if got := tl.cache().renders; got != n {
		t.Errorf("the finished tool rendered again (%d, then %d renders)", n, got)
	}
}

// A finished item that changes after all — the retry notice, updated in
// place — shows its new text.
func TestRetryNoticeUpdatesInPlace(t *testing.T) {
	t.Parallel()
	m, ev := itemModel(t)
	ev(agent.Retrying{Err: errString("overloaded"), Delay: time.Second, Attempt: 1})
	if s := screenOf(m); !strings.Contains(s, "(attempt 1)") {
		t.Fatalf("no retry notice:\n%s", s)
	}
	ev(agent.Retrying{Err: errString("overloaded"), Delay: 2 * time.Second, Attempt: 2})
	s := screenOf(m)
	if !strings.Contains(s, "(attempt 2)") || strings.Contains(s, "(attempt 1)") {
		t.Errorf("the retry notice was not updated in place:\n%s", s)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// A shell line's block shows the end of its output while it runs, then
// how it exited and what goes to the model.
func TestShellLineBlockShowsOutputThenExit(t *testing.T) {
	t.Parallel()
	m, _ := itemModel(t)
	it := &toolItem{id: "!-1", name: "!", args: "make test", start: time.Now(), rawCall: true}
	m.tr.add(it)
	m.toolItems[it.id] = it
	m.calls++
	m.Update(shellOutputMsg{it, "compiling\n"})
	if s := screenOf(m); !strings.Contains(s, "⎿ compiling") || !strings.Contains(s, "running") {
		t.Errorf("the running shell line does not show its output:\n%s", s)
	}
	m.Update(shellDoneMsg{it: it, res: shellline.Result{Line: "make test", ExitCode: 2, Output: "compiling\nFAIL\n"}})
	s := screenOf(m)
	for _, want := range []string{"✗ failed", "exit 2 · the command and its output go to the model", "⎿ compiling", "FAIL"} {
		if !strings.Contains(s, want) {
			t.Errorf("the finished shell line does not show %q:\n%s", want, s)
		}
	}
	if m.calls != 0 || m.toolItems[it.id] != nil {
		t.Errorf("the shell line still counts as running: calls=%d", m.calls)
	}
}
