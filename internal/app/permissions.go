package app

import (
	"context"
	"fmt"

	"github.com/otter-sh/otter/internal/config"
)

// PermissionRule is one saved [permissions] rule and the file it is in
// (see config.PermissionRule).
type PermissionRule = config.PermissionRule

// PermissionRules lists the [permissions] rules of every configuration
// file otter reads here, lowest scope first, each with its file and scope,
// whether a later file overrides it, and whether it waits for the
// project's trust.
func (a *App) PermissionRules() ([]PermissionRule, error) {
	return config.PermissionRules(config.LoadOptions{
		Paths: a.Paths, WorkDir: a.WorkDir, Extra: a.opts.ConfigFile, LookupEnv: a.opts.LookupEnv,
	})
}

// RuleNotRemovableError is a rule RemovePermission leaves alone: it is not
// in a file otter saves rules to (the user's config, the project's local
// config) but in the project's shared configuration or a file given for
// this run, which the person edits themselves.
type RuleNotRemovableError struct{ Rule PermissionRule }

func (e *RuleNotRemovableError) Error() string {
	r := e.Rule
	why := "the project's shared configuration, which otter never writes: the project's authors chose it"
	if r.Scope == config.ScopeFlag {
		why = "a file given for this run, which otter never writes"
	}
	return fmt.Sprintf("%s = %q is in %s (%s); edit that file to change it", r.Pattern, r.Decision, r.File, why)
}

// RemovePermission takes r out of its file and reloads the configuration,
// so that the agents stop applying it from the next tool call. Only a rule
// in the user's config or the project's local config is removed; any
// other is refused with a *RuleNotRemovableError.
func (a *App) RemovePermission(ctx context.Context, r PermissionRule) error {
	if !r.Removable() {
		return &RuleNotRemovableError{Rule: r}
	}
	if err := config.RemovePermission(r.File, r.Pattern); err != nil {
		return fmt.Errorf("removing the permission rule %s: %w", r.Pattern, err)
	}
	if _, err := a.Reload(ctx); err != nil {
		return fmt.Errorf("removed %s from %s, but reading the configuration again failed: %w", r.Pattern, r.File, err)
	}
	return nil
}
