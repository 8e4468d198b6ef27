package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// maxQueueLines is the most queued messages shown above the input; the
// rest are counted.
const maxQueueLines = 3

// The queue of messages typed while the agent works is the
// conversation's (app.Conversation.Enqueue); here are its keys and its
// lines above the input.

// enqueue keeps a message typed while the agent works; it is sent when
// the turn ends. Until then ↑ takes the newest back into the input and
// Esc drops them all.
func (m *model) enqueue(text string) {
	m.conv.Enqueue(text)
	m.hint = ""
}

// sendQueued sends the oldest queued message, once the agent is free.
func (m *model) sendQueued() tea.Cmd {
	if m.busy {
		return nil
	}
	text, ok := m.conv.Dequeue()
	if !ok {
		return nil
	}
	return m.chat(text)
}

// unqueue takes the newest queued message back into the input (↑ on an
// empty input), to edit it or delete it.
func (m *model) unqueue() bool {
	if m.input.Value() != "" {
		return false
	}
	text, ok := m.conv.Unqueue()
	if !ok {
		return false
	}
	m.input.SetValue(text)
	return true
}

// queueView shows the queued messages, one line each, above the input.
func (m *model) queueView() []string {
	queue := m.conv.Queued()
	if len(queue) == 0 {
		return nil
	}
	var out []string
	for i, q := range queue {
		if i == maxQueueLines-1 && len(queue) > maxQueueLines {
			out = append(out, m.st.dim.Render(fmt.Sprintf("  … %d more queued", len(queue)-i)))
			break
		}
		line := "queued › " + strings.ReplaceAll(q, "\n", " ⏎ ")
		out = append(out, m.st.dim.Render(ansi.Truncate(line, max(m.width, 10), "…")))
	}
	last := "sent when otter is done · ↑ edits the last · esc clears the queue"
	out = append(out, m.st.dim.Render(ansi.Truncate(last, max(m.width, 10), "…")))
	return out
}

// giveBack puts a message that was not sent back into the input, before
// what was typed since, so nothing typed is lost.
func (m *model) giveBack(text string) {
	if v := m.input.Value(); v != "" {
		text += "\n" + v
	}
	m.input.SetValue(text)
	m.input.Focus()
}
