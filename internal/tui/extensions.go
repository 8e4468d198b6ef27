package tui

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
)

// untrustedCommand words, for the transcript, why line's /NAME does not
// run when it is the untrusted project's; "" when it is not.
func (m *model) untrustedCommand(line string) string {
	var ue *app.UntrustedCommandError
	if !errors.As(m.app.CheckCommand(line), &ue) {
		return ""
	}
	how := "/trust, or `otter trust` in that directory"
	if ue.Changed {
		how = "/trust shows what changed, or `otter trust` in that directory"
	}
	return ue.Error() + ": " + how
}

// userCommand reports whether name ("/review:pr") is a custom command or a
// skill of the user's, which the Conversation expands when it is sent.
// Built-in commands are matched before it: they win a clash.
func (m *model) userCommand(name string) bool {
	ext := m.app.Extensions()
	n := strings.TrimPrefix(name, "/")
	return slices.ContainsFunc(ext.Commands, func(c app.Command) bool { return c.Name == n }) ||
		slices.ContainsFunc(ext.Skills, func(s app.Skill) bool { return s.Name == n })
}

// userCommandNames are the names Tab completes after a slash.
func (m *model) userCommandNames() []string {
	ext := m.app.Extensions()
	var out []string
	for _, c := range ext.Commands {
		out = append(out, "/"+c.Name)
	}
	for _, s := range ext.Skills {
		out = append(out, "/"+s.Name)
	}
	return out
}

// builtinNames are the first words of the built-in commands.
func builtinNames() []string {
	var out []string
	for _, c := range slashCommands {
		w, _, _ := strings.Cut(c, " ")
		out = append(out, w)
	}
	return append(out, "/?", "/exit", "/q", "/skills", "/hooks")
}

// extensionClashes says which custom commands or skills a built-in
// command or a server's prompt hides (built-ins and prompts win).
func (m *model) extensionClashes() []string {
	ext := m.app.Extensions()
	taken := builtinNames()
	for _, p := range m.prompts {
		taken = append(taken, promptCommand(p))
	}
	var out []string
	for _, c := range ext.Commands {
		if slices.Contains(taken, "/"+c.Name) {
			out = append(out, fmt.Sprintf("custom command /%s (%s) is hidden by otter's own /%s; rename %s", c.Name, c.Scope, c.Name, c.File))
		}
	}
	for _, s := range ext.Skills {
		if slices.Contains(taken, "/"+s.Name) {
			out = append(out, fmt.Sprintf("skill %s is not a /command: otter's own /%s has that name (the model can still load it)", s.Name, s.Name))
		}
	}
	return out
}

// extensionHelp lists the custom commands and skills for /help.
func (m *model) extensionHelp() string {
	ext := m.app.Extensions()
	if len(ext.Commands)+len(ext.Skills) == 0 {
		return ""
	}
	var b strings.Builder
	if len(ext.Commands) > 0 {
		b.WriteString("\n\nYour commands")
		for _, c := range ext.Commands {
			name := "/" + c.Name
			if c.ArgumentHint != "" {
				name += " " + c.ArgumentHint
			}
			fmt.Fprintf(&b, "\n  %-24s %s (%s)", name, c.Description, c.Scope)
		}
	}
	if len(ext.Skills) > 0 {
		b.WriteString("\n\nSkills (/NAME asks the model to use one now; /skills lists them)")
		for _, s := range ext.Skills {
			fmt.Fprintf(&b, "\n  %-24s %s (%s)", "/"+s.Name, summaryLine(s.Description), s.Scope)
		}
	}
	return b.String()
}

func summaryLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	if len(l) > 100 {
		l = l[:99] + "…"
	}
	return l
}

// extensionCommand handles /skills and /hooks.
func (m *model) extensionCommand(cmd string) (tea.Cmd, bool) {
	switch cmd {
	case "/skills":
		ext := m.app.Extensions()
		if len(ext.Skills) == 0 {
			m.notice(itemInfo, "no skills: put one in .otter/skills/NAME/SKILL.md (or .agents/skills, .claude/skills) of a trusted project, or in ~/.config/otter/skills/NAME/SKILL.md")
			return nil, true
		}
		var b strings.Builder
		b.WriteString("Skills (the model loads one with the skill tool; /NAME asks it to use one now)")
		for _, s := range ext.Skills {
			fmt.Fprintf(&b, "\n  %s — %s\n    %s (%s)", s.Name, summaryLine(s.Description), s.File(), s.Scope)
		}
		m.notice(itemInfo, b.String())
		return nil, true
	case "/hooks":
		ext := m.app.Extensions()
		list := ext.Hooks.List()
		if len(list) == 0 {
			m.notice(itemInfo, "no hooks: add [[hooks.EVENT]] tables to config.toml (otter hooks import converts a Claude Code settings.json)")
			return nil, true
		}
		var b strings.Builder
		b.WriteString("Hooks")
		for _, h := range list {
			matcher := ""
			if h.Matcher != "" {
				matcher = " " + h.Matcher
			}
			fmt.Fprintf(&b, "\n  %s%s: %s\n    from %s", h.Event, matcher, h.Command.Command, h.Source)
		}
		m.notice(itemInfo, b.String())
		return nil, true
	}
	return nil, false
}

// hookEvent shows what a hook reported, or a note about a message sent.
func (m *model) hookEvent(ev agent.Event) bool {
	switch ev := ev.(type) {
	case agent.HookMessage:
		kind := itemInfo
		if ev.Failed {
			kind = itemError
		}
		m.notice(kind, ev.Text)
	case app.Note:
		m.notice(itemInfo, ev.Text)
	default:
		return false
	}
	return true
}
