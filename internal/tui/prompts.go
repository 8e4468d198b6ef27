package tui

// /mcp prompts: the servers' prompts in a filterable list, like /mcp tools
// and /mcp resources; Enter uses one (a form asks for its arguments), Tab
// puts its command in the input to add them there.

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/termtext"
)

// promptsPanel is /mcp prompts [SERVER].
type promptsPanel struct {
	listNav
	m      *model
	server string // "" for every server's
}

// usePromptMsg uses a prompt chosen in /mcp prompts.
type usePromptMsg struct{ p app.Prompt }

func newPromptsPanel(m *model, server string) *promptsPanel {
	return &promptsPanel{listNav: newListNav("filter: ", "type to filter prompt names"), m: m, server: server}
}

func (p *promptsPanel) finished() bool { return p.done }

// rows are the prompts of the panel's server whose command contains the
// filter, in any case.
func (p *promptsPanel) rows() []app.Prompt {
	q := strings.ToLower(strings.TrimSpace(p.filter.Value()))
	var out []app.Prompt
	for _, pr := range p.m.prompts {
		if p.server != "" && pr.Server != p.server {
			continue
		}
		if strings.Contains(strings.ToLower(promptCommand(pr)), q) {
			out = append(out, pr)
		}
	}
	return out
}

func (p *promptsPanel) update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		if p.navigate(k.String(), func() int { return len(p.rows()) }) {
			return nil
		}
		switch k.String() {
		case "enter", "tab":
			rows := p.rows()
			if len(rows) == 0 {
				return nil
			}
			pr := rows[min(p.cursor, len(rows)-1)]
			p.done = true
			if k.String() == "tab" {
				p.m.input.SetValue(promptCommand(pr) + " ")
				p.m.input.Focus()
				return nil
			}
			return func() tea.Msg { return usePromptMsg{pr} }
		}
	}
	var cmd tea.Cmd
	p.filter, cmd = p.filter.Update(msg)
	if _, ok := msg.(tea.KeyPressMsg); ok {
		p.cursor = 0
	}
	return cmd
}

// promptArgsLine is a prompt's arguments as typed after its command:
// name=… for a required one, [name=…] for the others.
func promptArgsLine(pr app.Prompt) string {
	var parts []string
	for _, a := range pr.Arguments {
		if a.Required {
			parts = append(parts, a.Name+"=…")
		} else {
			parts = append(parts, "["+a.Name+"=…]")
		}
	}
	return strings.Join(parts, " ")
}

func (p *promptsPanel) view(width, height int) string {
	st := p.m.st
	rows := p.rows()
	n := len(rows)
	p.cursor = min(p.cursor, max(n-1, 0))
	title := "Prompts"
	if p.server != "" {
		title += " of " + p.server
	}
	var b strings.Builder
	start, end := p.head(&b, st, title, n, width, height)
	col := 0
	for _, pr := range rows[start:end] {
		col = max(col, ansi.StringWidth(promptCommand(pr)))
	}
	col = min(col, width/2)
	for i := start; i < end; i++ {
		pr := rows[i]
		name := promptCommand(pr)
		if pad := col - ansi.StringWidth(name); pad > 0 {
			name += strings.Repeat(" ", pad)
		}
		mark := "  "
		if i == p.cursor {
			mark = st.accent.Render("› ")
			name = st.accent.Bold(true).Render(name)
		}
		line := mark + name
		desc := strings.SplitN(termtext.Visible(pr.Description), "\n", 2)[0]
		if args := promptArgsLine(pr); args != "" {
			desc = strings.TrimSpace(args + "  " + desc)
		}
		if room := width - lipgloss.Width(line) - 3; room > 8 && desc != "" {
			line += "  " + st.dim.Render(ansi.Truncate(desc, room, "…"))
		}
		b.WriteString(line + "\n")
	}
	if n == 0 {
		if len(p.m.prompts) == 0 {
			b.WriteString(st.dim.Render("  no connected server offers prompts") + "\n")
		} else {
			b.WriteString(st.dim.Render("  no prompt matches") + "\n")
		}
	}
	body := clipLines(strings.TrimRight(b.String(), "\n"), max(height-2, 1), true)
	return body + "\n\n" + st.dim.Render("type to filter · ↑/↓ select · enter use it · tab to the input · esc close")
}
