package tui

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/otter-sh/otter/internal/app"
)

// sessionPicker is /resume without an argument (and otter -r without an
// ID): the saved conversations, this directory's first, each with its
// title, age, message count and first prompt. Typing searches their full
// text; enter continues the chosen one as /resume ID does; esc closes.
type sessionPicker struct {
	listNav
	m     *model
	query string // the words list is (being) found for
	list  []app.SessionFound
	err   error
	// searching: a search for query runs (a full-text search of a large
	// store takes a moment, so it runs off the UI's loop).
	searching bool
}

// sessionsFoundMsg is the end of a picker's search.
type sessionsFoundMsg struct {
	p     *sessionPicker
	query string
	list  []app.SessionFound
	err   error
}

func newSessionPicker(m *model) *sessionPicker {
	p := &sessionPicker{listNav: newListNav("search: ", "type words from any message to search them all"), m: m}
	p.find()
	return p
}

// openSessionPicker opens the picker, or says why the saved sessions
// cannot be listed.
func (m *model) openSessionPicker() {
	p := newSessionPicker(m)
	if p.err != nil {
		m.notice(itemError, p.err.Error())
		return
	}
	m.panel = p
}

// find lists the saved sessions (a quick list, read at once).
func (p *sessionPicker) find() {
	p.query, p.searching = "", false
	p.list, p.err = p.m.conv.FindSessions(p.m.ctx, "")
	p.cursor = 0
}

// search starts the search for the sessions whose messages hold the
// filter's words; the list changes when it ends.
func (p *sessionPicker) search() tea.Cmd {
	q := strings.TrimSpace(p.filter.Value())
	if q == "" {
		p.find()
		return nil
	}
	p.query, p.searching = q, true
	conv, ctx := p.m.conv, p.m.ctx
	return func() tea.Msg {
		list, err := conv.FindSessions(ctx, q)
		return sessionsFoundMsg{p: p, query: q, list: list, err: err}
	}
}

func (p *sessionPicker) finished() bool { return p.done }

func (p *sessionPicker) update(msg tea.Msg) tea.Cmd {
	if f, ok := msg.(sessionsFoundMsg); ok {
		if f.p == p && f.query == p.query { // else a later search is on its way
			p.list, p.err, p.cursor, p.searching = f.list, f.err, 0, false
		}
		return nil
	}
	if k, ok := msg.(tea.KeyPressMsg); ok {
		if p.navigate(k.String(), func() int { return len(p.list) }) {
			return nil
		}
		switch k.String() {
		case "enter":
			if len(p.list) == 0 {
				return nil
			}
			p.done = true
			return p.m.resumeSession(p.list[p.cursor].ID)
		}
	}
	var cmd tea.Cmd
	p.filter, cmd = p.filter.Update(msg)
	if strings.TrimSpace(p.filter.Value()) != p.query {
		return tea.Batch(cmd, p.search())
	}
	return cmd
}

func (p *sessionPicker) view(width, height int) string {
	st := p.m.st
	here := p.m.app.WorkDir
	rowsRoom := max(height-4, 1)
	start := max(p.cursor-rowsRoom+1, 0)
	end := min(len(p.list), start+rowsRoom)
	count := fmt.Sprintf("  %d", len(p.list))
	if start > 0 || end < len(p.list) {
		count = fmt.Sprintf("  %d–%d of %d", start+1, end, len(p.list))
	}
	if p.searching {
		count += " · searching…"
	}
	var b strings.Builder
	b.WriteString(st.title.Render("Resume a conversation") + st.dim.Render(count+" · this directory's first") + "\n")
	p.filter.SetWidth(max(width-lipgloss.Width(p.filter.Prompt)-2, 10))
	b.WriteString(p.filter.View() + "\n")
	now := time.Now()
	// Titles in one column, as wide as the widest shown (up to a third
	// of the width); age and count in the next.
	col := 0
	for i := start; i < end; i++ {
		col = max(col, ansi.StringWidth(truncateText(p.list[i].Title, max(width/3, 12))))
	}
	for i := start; i < end; i++ {
		s := p.list[i]
		title := truncateText(s.Title, max(width/3, 12))
		title += strings.Repeat(" ", col-ansi.StringWidth(title))
		mark := "  "
		if i == p.cursor {
			mark = st.accent.Render("› ")
			title = st.accent.Bold(true).Render(title)
		}
		meta := fmt.Sprintf("  %-9s %3d msgs", app.SessionAge(s.Updated, now), s.Messages)
		if s.Cwd != here {
			meta += " · " + filepath.Base(s.Cwd)
		}
		line := mark + title + st.dim.Render(meta)
		// What matched the search, else the first prompt.
		if room := width - lipgloss.Width(line) - 4; room > 8 && s.Match != "" {
			line += "  " + matchText(st, truncateText(s.Match, room))
		} else if room > 8 && s.FirstPrompt != "" {
			line += "  " + truncateText(s.FirstPrompt, room)
		}
		b.WriteString(line + "\n")
	}
	switch {
	case p.err != nil:
		b.WriteString(st.errText.Render("  "+p.err.Error()) + "\n")
	case len(p.list) == 0 && p.searching:
	case len(p.list) == 0 && p.query != "":
		b.WriteString(st.dim.Render(fmt.Sprintf("  no saved conversation mentions %q", p.query)) + "\n")
	case len(p.list) == 0:
		b.WriteString(st.dim.Render("  no saved conversation yet") + "\n")
	}
	body := clipLines(strings.TrimRight(b.String(), "\n"), max(height-2, 1), true)
	return body + "\n\n" + st.dim.Render("type to search · ↑/↓ select · enter resume · esc close")
}

// matchText shows a search match: the words found (between « and ») in
// the accent colour, the brackets dropped.
func matchText(st styles, s string) string {
	var b strings.Builder
	for {
		open := strings.Index(s, "«")
		if open < 0 {
			break
		}
		end := strings.Index(s[open:], "»")
		if end < 0 {
			break
		}
		b.WriteString(s[:open])
		b.WriteString(st.accent.Render(s[open+len("«") : open+end]))
		s = s[open+end+len("»"):]
	}
	b.WriteString(s)
	return b.String()
}
