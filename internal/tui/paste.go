package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// pasteCollapseLines is the size from which a paste shows as one
// placeholder in the input and the transcript; it is sent whole.
const pasteCollapseLines = 10

// paste is a long paste kept out of the input.
type paste struct {
	label string // what the input shows, e.g. "[pasted 80 lines #1]"
	text  string
}

// pasteLong puts a long paste into the input as a placeholder; short ones
// go in as they are.
func (m *model) pasteLong(msg tea.PasteMsg) tea.Cmd {
	// Terminals (and tmux) send a paste's line breaks as CR.
	text := strings.ReplaceAll(strings.ReplaceAll(msg.Content, "\r\n", "\n"), "\r", "\n")
	n := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	if n < pasteCollapseLines {
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(tea.PasteMsg{Content: text})
		return cmd
	}
	p := paste{label: fmt.Sprintf("[pasted %d lines #%d]", n, len(m.pastes)+1), text: text}
	m.pastes = append(m.pastes, p)
	m.input.InsertString(p.label)
	return nil
}

// expandPastes replaces the placeholders of line with what was pasted,
// and forgets the pastes.
func (m *model) expandPastes(line string) string {
	for _, p := range m.pastes {
		line = strings.Replace(line, p.label, p.text, 1)
	}
	m.pastes = nil
	return line
}
