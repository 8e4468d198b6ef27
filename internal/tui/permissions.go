package tui

// /permissions: the saved [permissions] rules and where each comes from;
// /permissions remove N takes out one otter saved.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/config"
)

type permissionRemovedMsg struct {
	rule app.PermissionRule
	err  error
}

// permissionsCommand runs /permissions [remove N].
func (m *model) permissionsCommand(rest string) tea.Cmd {
	rules, err := m.app.PermissionRules()
	if err != nil {
		m.notice(itemError, err.Error())
		return nil
	}
	if rest == "" {
		m.notice(itemInfo, permissionsText(rules))
		return nil
	}
	arg, ok := strings.CutPrefix(rest, "remove ")
	n, err := strconv.Atoi(strings.TrimSpace(arg))
	if !ok || err != nil || n < 1 || n > len(rules) {
		m.notice(itemError, fmt.Sprintf("/permissions %s: use /permissions to list the rules, /permissions remove N to remove rule N (1–%d)", rest, len(rules)))
		return nil
	}
	r := rules[n-1]
	ctx, a := m.ctx, m.app
	return func() tea.Msg { return permissionRemovedMsg{rule: r, err: a.RemovePermission(ctx, r)} }
}

// permissionRemoved says what /permissions remove did.
func (m *model) permissionRemoved(msg permissionRemovedMsg) {
	r := msg.rule
	var nr *app.RuleNotRemovableError
	switch {
	case errors.As(msg.err, &nr):
		m.notice(itemError, "not removed: "+nr.Error()+" — /permissions remove takes out only rules in your config or the project's local config, where otter saves your \"always\" answers")
	case msg.err != nil:
		m.notice(itemError, msg.err.Error())
	default:
		m.notice(itemInfo, fmt.Sprintf("removed %s = %q from %s: otter asks again before it runs (or follows the other rules)", r.Pattern, r.Decision, r.File))
	}
}

// permissionsText lists the rules for /permissions.
func permissionsText(rules []app.PermissionRule) string {
	if len(rules) == 0 {
		return "No permission rules are saved. Answering \"always\" to a permission prompt saves one; [permissions] in a config file sets them by hand."
	}
	var b strings.Builder
	b.WriteString("Permission rules ([permissions]; a later file wins over an earlier one for the same pattern):\n")
	for i, r := range rules {
		var notes []string
		notes = append(notes, scopeWords(r.Scope))
		if r.Held {
			notes = append(notes, "not applied until you trust the project")
		}
		if r.Overridden {
			notes = append(notes, "overridden by a later file")
		}
		fmt.Fprintf(&b, "  %d. %s = %s   %s (%s)\n", i+1, r.Pattern, r.Decision, r.File, strings.Join(notes, ", "))
	}
	b.WriteString("/permissions remove N removes rule N when it is in your config or the project's local config (where otter saves your \"always\" answers); the project's shared config and a --config file are yours to edit.")
	return b.String()
}

func scopeWords(s config.Scope) string {
	switch s {
	case config.ScopeUser:
		return "your config"
	case config.ScopeLocal:
		return "the project's local config"
	case config.ScopeProject:
		return "the project's shared config"
	case config.ScopeFlag:
		return "--config"
	}
	return string(s)
}
