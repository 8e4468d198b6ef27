package tui

import (
	"charm.land/huh/v2"
	"charm.land/lipgloss/v2"

	"github.com/otter-sh/otter/internal/app"
)

// styles is the palette for a light or a dark terminal.
type styles struct {
	dark bool

	user, assistant, info, errText, dim, accent lipgloss.Style
	toolName, ok, fail, warn                    lipgloss.Style
	status, statusKey                           lipgloss.Style
	title, selected, border, modal              lipgloss.Style
	stateColor                                  map[app.ServerState]lipgloss.Style
}

func newStyles(dark bool) styles {
	c := lipgloss.LightDark(dark)
	fg := c(lipgloss.Color("#1f1f1f"), lipgloss.Color("#e4e4e4"))
	dim := c(lipgloss.Color("#6b6b6b"), lipgloss.Color("#8a8a8a"))
	accent := c(lipgloss.Color("#5a3fc0"), lipgloss.Color("#b39dff"))
	green := c(lipgloss.Color("#1a7f37"), lipgloss.Color("#5fd787"))
	red := c(lipgloss.Color("#c62828"), lipgloss.Color("#ff6b6b"))
	yellow := c(lipgloss.Color("#9a6700"), lipgloss.Color("#e5c07b"))
	blue := c(lipgloss.Color("#0550ae"), lipgloss.Color("#61afef"))
	barBg := c(lipgloss.Color("#e8e8e8"), lipgloss.Color("#262626"))

	s := styles{dark: dark}
	s.user = lipgloss.NewStyle().Foreground(accent).Bold(true)
	s.assistant = lipgloss.NewStyle().Foreground(fg)
	s.info = lipgloss.NewStyle().Foreground(dim)
	s.errText = lipgloss.NewStyle().Foreground(red)
	s.dim = lipgloss.NewStyle().Foreground(dim)
	s.accent = lipgloss.NewStyle().Foreground(accent)
	s.toolName = lipgloss.NewStyle().Foreground(blue).Bold(true)
	s.ok = lipgloss.NewStyle().Foreground(green)
	s.fail = lipgloss.NewStyle().Foreground(red)
	s.warn = lipgloss.NewStyle().Foreground(yellow)
	s.status = lipgloss.NewStyle().Background(barBg).Foreground(fg)
	s.statusKey = lipgloss.NewStyle().Background(barBg).Foreground(accent).Bold(true)
	s.title = lipgloss.NewStyle().Foreground(accent).Bold(true)
	s.selected = lipgloss.NewStyle().Reverse(true)
	s.border = lipgloss.NewStyle().Foreground(dim)
	s.modal = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1)
	s.stateColor = map[app.ServerState]lipgloss.Style{
		app.StateConnected: s.ok,
		app.StateFailed:    s.fail,
		app.StateNeedsAuth: s.warn,
		app.StatePending:   lipgloss.NewStyle().Foreground(blue),
		app.StateDisabled:  s.dim,
		app.StateIdle:      s.dim,
	}
	return s
}

// state renders a server state in its colour.
func (s styles) state(st app.ServerState) string {
	if style, ok := s.stateColor[st]; ok {
		return style.Render(string(st))
	}
	return string(st)
}

// huhTheme is the forms' theme, following the terminal background.
func (s styles) huhTheme() huh.Theme {
	dark := s.dark
	return huh.ThemeFunc(func(bool) *huh.Styles { return huh.ThemeCharm(dark) })
}
