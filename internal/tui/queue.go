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

// enqueue keeps a message typed while the agent works; it is sent when
// the turn ends. Until then ↑ takes the newest back into the input and
// Esc drops them all.
func (m *model) enqueue(text string) {
	m.queue = append(m.queue, text)
	m.hint = ""
}

// sendQueued sends the oldest queued message, once the agent is free.
func (m *model) sendQueued() tea.Cmd {
	if m.busy || len(m.queue) == 0 {
		return nil
	}
	text := m.queue[0]
	m.queue = m.queue[1:]
	return m.chat(text)
}

// unqueue takes the newest queued message back into the input (↑ on an
// empty input), to edit it or delete it.
func (m *model) unqueue() bool {
	n := len(m.queue)
	if n == 0 || m.input.Value() != "" {
		return false
	}
	m.input.SetValue(m.queue[n-1])
	m.queue = m.queue[:n-1]
	return true
}

// queueView shows the queued messages, one line each, above the input.
func (m *model) queueView() []string {
	if len(m.queue) == 0 {
		return nil
	}
	var out []string
	for i, q := range m.queue {
		if i == maxQueueLines-1 && len(m.queue) > maxQueueLines {
			out = append(out, m.st.dim.Render(fmt.Sprintf("  … %d more queued", len(m.queue)-i)))
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
