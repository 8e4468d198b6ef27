package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/otter-sh/otter/internal/agent"
)

// screenOf draws m and returns its plain text.
func screenOf(m *model) string { return ansi.Strip(m.render()) }

// hundredMessages returns an 80×24 model with 100 user messages.
func hundredMessages(t *testing.T) *model {
	m := newTestModel(t, &fakeHost{}, Options{})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	for i := range 100 {
		m.tr.add(&userItem{text: fmt.Sprintf("message %03d", i)})
	}
	return m
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }

// While an answer streams below, a transcript scrolled back stays put;
// the rule says how many lines arrived; End returns to the bottom.
func TestScrolledBackViewStaysPutWhileStreaming(t *testing.T) {
	t.Parallel()
	m := hundredMessages(t)
	m.turn = 1
	stream := func(text string) {
		m.Update(chatEventMsg{turn: 1, ev: agent.TextDelta{Text: text}})
		m.Update(frameMsg{})
	}
	stream("The answer begins.\n\n")
	m.Update(keyMsg("pgup"))
	before := screenOf(m)
	if strings.Contains(before, "The answer begins") {
		t.Fatalf("pgup did not scroll back:\n%s", before)
	}
	if !strings.Contains(before, "↓ more below") {
		t.Errorf("scrolled back, the rule does not say there is more below:\n%s", before)
	}
	for i := range 30 {
		stream(fmt.Sprintf("Paragraph %d of the streamed answer.\n\n", i))
	}
	after := screenOf(m)
	if firstLine(after) != firstLine(before) {
		t.Errorf("the window moved while the answer streamed: top line %q, then %q", firstLine(before), firstLine(after))
	}
	if !strings.Contains(after, "new lines · end follows") {
		t.Errorf("the rule does not count the new lines:\n%s", after)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyEnd})
	bottom := screenOf(m)
	if !strings.Contains(bottom, "Paragraph 29") || strings.Contains(bottom, "new lines") {
		t.Errorf("end did not return to the newest line:\n%s", bottom)
	}
	// Following again, new text shows as it arrives.
	stream("The last words.")
	if s := screenOf(m); !strings.Contains(s, "The last words.") {
		t.Errorf("after end, the window does not follow the stream:\n%s", s)
	}
}

// The mouse wheel scrolls (mouse reporting is on), Home shows the first
// line, and ctrl+s turns mouse reporting off so that the terminal selects
// text.
func TestWheelHomeAndMouseToggle(t *testing.T) {
	t.Parallel()
	m := hundredMessages(t)
	if v := m.View(); v.MouseMode != tea.MouseModeCellMotion {
		t.Errorf("mouse mode = %v, want cell motion (the wheel scrolls)", v.MouseMode)
	}
	wheel := func(b tea.MouseButton) { m.Update(tea.MouseWheelMsg{Button: b, X: 5, Y: 5}) }
	for range 4 {
		wheel(tea.MouseWheelUp)
	}
	s := screenOf(m)
	if strings.Contains(s, "message 099") || !strings.Contains(s, "message 093") || strings.Contains(s, "message 094") {
		t.Errorf("4 notches of the wheel did not scroll back 12 lines (6 messages):\n%s", s)
	}
	for range 4 {
		wheel(tea.MouseWheelDown)
	}
	if s = screenOf(m); !strings.Contains(s, "message 099") || strings.Contains(s, "more below") {
		t.Errorf("the wheel did not scroll back down to the newest line:\n%s", s)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyHome})
	if s = screenOf(m); !strings.Contains(firstLine(s), "otter") || !strings.Contains(s, "message 000") {
		t.Errorf("home did not show the first line:\n%s", s)
	}
	// With text in the input, Home moves in the line instead.
	m.Update(tea.KeyPressMsg{Code: tea.KeyEnd})
	m.input.SetValue("abc")
	m.Update(tea.KeyPressMsg{Code: tea.KeyHome})
	if s = screenOf(m); !strings.Contains(s, "message 099") {
		t.Errorf("home with text in the input scrolled the transcript:\n%s", s)
	}
	m.Update(tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	if v := m.View(); v.MouseMode != tea.MouseModeNone {
		t.Errorf("after ctrl+s mouse mode = %v, want none (the terminal selects)", v.MouseMode)
	}
	if s = screenOf(m); !strings.Contains(s, "mouse off") {
		t.Errorf("ctrl+s does not say what it did:\n%s", s)
	}
}

// Markdown headings show as headings, not as the "## " that wrote them.
func TestMarkdownHeadingsHaveNoHashes(t *testing.T) {
	t.Parallel()
	for _, dark := range []bool{true, false} {
		m := newTestModel(t, &fakeHost{}, Options{})
		m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		m.st = newStyles(dark)
		m.tr.add(newAnswer("# Title\n\n## Steps\n\n1. one\n\n### Details\n\ntext\n"))
		s := screenOf(m)
		for _, want := range []string{"Steps", "Details", "one"} {
			if !strings.Contains(s, want) {
				t.Errorf("dark=%v: %q is missing:\n%s", dark, want, s)
			}
		}
		if strings.Contains(s, "## Steps") || strings.Contains(s, "### Details") {
			t.Errorf("dark=%v: headings show their Markdown marks:\n%s", dark, s)
		}
	}
}
