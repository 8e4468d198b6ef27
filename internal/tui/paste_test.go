package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// A long paste shows as one placeholder in the input and in the
// transcript (ctrl+o shows it), and is sent whole; the later lines of a
// multi-line message indent under the first.
func TestLongPasteCollapses(t *testing.T) {
	t.Parallel()
	b := &fakeHost{}
	h := start(t, b)
	h.waitFor("/help")
	var lines []string
	for i := 1; i <= 80; i++ {
		lines = append(lines, fmt.Sprintf("pasted line %02d", i))
	}
	h.typeText("look at this: ")
	h.tm.Send(tea.PasteMsg{Content: strings.Join(lines, "\r")}) // as terminals send it
	s := h.waitFor("look at this: [pasted 80 lines #1]")
	if strings.Contains(s, "pasted line 80") {
		t.Errorf("the input shows the paste:\n%s", s)
	}
	h.press("enter")
	s = h.waitFor("› look at this: [pasted 80 lines #1]", "ctrl+o shows the paste", "\n  ok")
	if strings.Contains(s, "pasted line 40") {
		t.Errorf("the transcript shows the whole paste:\n%s", s)
	}
	if !b.did("send look at this: " + strings.Join(lines, "\n")) {
		t.Errorf("the paste was not sent whole; actions %q", b.actions)
	}
	h.press("ctrl+o")
	h.waitFor("pasted line 80")
	h.waitGone("working") // the turn is over: the next message is sent, not queued

	// A short paste goes in as it is; its second line indents under the first.
	h.press("ctrl+o")
	h.tm.Send(tea.PasteMsg{Content: "first line\nsecond line"})
	h.press("enter")
	if s = h.waitFor("› first line"); !strings.Contains(s, "\n  second line") {
		t.Errorf("the second line does not indent under the first:\n%s", s)
	}
}
