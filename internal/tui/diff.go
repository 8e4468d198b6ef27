package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/termtext"
	"github.com/otter-sh/otter/internal/tool"
)

// The change edit_file and write_file make, as a unified diff: in the
// permission panel before it is made, and folded in the call's block once
// it is (ctrl+o unfolds it).

// diffLines colours a unified diff for the terminal: removed lines red,
// added lines green, hunk heads in the accent colour, the file heads and
// the context dim. Each line is cut at width, or, with wrap, wrapped under
// itself. Tabs become spaces and escape sequences are dropped: the lines
// are a file's, not otter's.
func (s styles) diffLines(diff string, width int, wrap bool) []string {
	width = max(width, 10)
	var out []string
	for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
		l = termtext.Line(strings.ReplaceAll(l, "\t", "    "))
		style := s.dim
		switch {
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		case strings.HasPrefix(l, "@@"):
			style = s.accent
		case strings.HasPrefix(l, "+"):
			style = s.ok
		case strings.HasPrefix(l, "-"):
			style = s.fail
		}
		if !wrap {
			out = append(out, style.Render(ansi.Truncate(l, width, "…")))
			continue
		}
		for _, part := range strings.Split(ansi.Wrap(l, width, ""), "\n") {
			out = append(out, style.Render(part))
		}
	}
	return out
}

// diffStat counts the lines a unified diff adds and removes.
func diffStat(diff string) (added, removed int) {
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return added, removed
}

// changeOf splits the result of a call of edit_file or write_file into
// what it says it did and the diff that follows ("Edited a.go: 1
// replacement(s).", then the diff after a blank line); ok is false for
// another tool's result, or one without a diff (a refusal).
func changeOf(toolName, result string) (summary, diff string, ok bool) {
	if toolName != app.ToolEditFile && toolName != app.ToolWriteFile {
		return "", "", false
	}
	summary, rest, ok := strings.Cut(result, "\n\n--- ")
	if !ok {
		return "", "", false
	}
	return summary, "--- " + rest, true
}

// renderChange draws a finished edit_file or write_file call's body: what
// it did with how many lines it added and removed, the diff folded;
// expanded, the whole diff in colour under it.
func (t *toolItem) renderChange(v *itemView, summary, diff string) string {
	st, w := v.st, v.width
	added, removed := diffStat(diff)
	stat := st.ok.Render(fmt.Sprintf("+%d", added)) + " " + st.fail.Render(fmt.Sprintf("-%d", removed))
	line := "\n  ⎿ " + st.dim.Render(ansi.Truncate(termtext.Line(summary), max(w-20, 10), "…")) + "  " + stat
	if !v.expand {
		return line + st.dim.Render(" (ctrl+o shows the diff)")
	}
	var b strings.Builder
	b.WriteString(line)
	lines := st.diffLines(diff, w-4, true)
	const limit = 200 // as an expanded result
	for i, l := range lines {
		if i == limit {
			b.WriteString("\n    " + st.dim.Render("… +"+countOf(len(lines)-limit, "line")))
			break
		}
		b.WriteString("\n    " + l)
	}
	return b.String()
}

// diffHeadLines is how many lines of a change the permission panel shows
// under its question; ctrl+o shows all of it.
const diffHeadLines = 16

// editRules are what "for this session" allows of a change to a file: the
// tools that change files, named as the tools name them.
func editRules(rules []string) bool {
	return len(rules) > 0 && !slices.ContainsFunc(rules, func(r string) bool {
		return r != app.ToolEditFile && r != app.ToolWriteFile
	})
}

// sessionChoice is the permission panel's "for this session" answer, in
// the words of what it allows.
func sessionChoice(req ask.Permission) string {
	if editRules(req.Rules) {
		return "Allow edits for this session"
	}
	if prefixes := commandPrefixes(req.Rules); len(prefixes) > 0 {
		return "Allow commands starting with " + strings.Join(prefixes, ", ") + " for this session"
	}
	return "Allow for this session"
}

// commandPrefixes are the prefixes of rules that are all command rules
// ("run_command(git status:*)" → "git status"); nil when any is not.
func commandPrefixes(rules []string) []string {
	var out []string
	for _, r := range rules {
		_, spec, ok := tool.CommandRule(r)
		prefix, wild := strings.CutSuffix(spec, ":*")
		if !ok || !wild || prefix == "" {
			return nil
		}
		out = append(out, prefix)
	}
	return out
}
