package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/otter-sh/otter/internal/agent"
)

// A streaming answer keeps the blocks it has rendered and renders only
// the one arriving; a code block with blank lines inside stays one block,
// and what shows mid-stream is what the whole answer shows at the end.
func TestStreamingRendersCompleteBlocksOnce(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, &fakeHost{}, Options{})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 60})
	m.turn = 1
	answer := "## Plan\n\nFirst a paragraph.\n\n```go\nfunc f() {\n\n\treturn\n}\n```\n\n- one\n- two\n\nThe end of it.\n"
	for _, w := range strings.SplitAfter(answer, " ") {
		m.Update(chatEventMsg{turn: 1, ev: agent.TextDelta{Text: w}})
		m.Update(frameMsg{})
		m.render()
	}
	it := m.streaming
	if it == nil || it.stream.done == 0 {
		t.Fatal("no block of the streaming answer was kept")
	}
	if it.stream.inFence {
		t.Error("the stream thinks it ends inside a code fence")
	}
	mid := ansi.Strip(strings.Join(m.itemLines(it), "\n"))
	m.Update(chatEventMsg{turn: 1, ev: agent.TurnFinished{Text: answer}})
	final := ansi.Strip(strings.Join(m.itemLines(it), "\n"))
	norm := func(s string) string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if l = strings.TrimRight(l, " "); l != "" {
				out = append(out, l)
			}
		}
		return strings.Join(out, "\n")
	}
	if norm(mid) != norm(final) {
		t.Errorf("mid-stream the answer shows\n%s\nwhole it shows\n%s", mid, final)
	}
	if !strings.Contains(final, "func f() {") || !strings.Contains(final, "The end of it.") {
		t.Errorf("the answer is not all there:\n%s", final)
	}
}
