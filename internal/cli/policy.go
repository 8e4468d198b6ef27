package cli

import (
	"context"
	"fmt"
	"path"
	"slices"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/tool"
)

// PromptPolicy answers the core's questions without a person, for
// `otter -p`, as its flags say: it implements ask.Asker.
//
// A tool call that would ask (see tool.Info.NeedsConsent; not allowed by [permissions])
// is allowed only when AllowAll is set or its qualified name matches one of
// AllowTools (path.Match globs, e.g. "mcp__github__*"), or, for a tool that
// runs commands, when each of its commands matches one TOOL(SPEC) entry
// ("run_command(git status:*)", as in [permissions]); sampling requests
// are approved only with AllowSampling; elicitation is declined and logins
// are postponed.
type PromptPolicy struct {
	AllowTools    []string
	AllowAll      bool
	AllowSampling bool
}

var _ ask.Asker = (*PromptPolicy)(nil)

// check refuses an AllowTools pattern that is not a glob, as the config
// refuses one in allowed_tools: it would never match, and every call it
// was meant to allow would be denied.
func (p *PromptPolicy) check() error {
	for _, pat := range p.AllowTools {
		if !config.ValidGlob(pat) {
			return fmt.Errorf("--allow-tools: bad glob pattern %q (%s)", pat, config.GlobHint)
		}
	}
	return nil
}

// ApproveTool implements ask.Approver.
func (p *PromptPolicy) ApproveTool(ctx context.Context, req ask.Permission) (ask.PermissionDecision, error) {
	if req.Unconfined {
		// Running outside the sandbox is a person's call, one command at a
		// time: no flag allows it.
		return ask.Deny, nil
	}
	if p.AllowAll {
		return ask.AllowOnce, nil
	}
	for _, pat := range p.AllowTools {
		if ok, _ := path.Match(pat, req.Tool); ok || pat == req.Tool {
			return ask.AllowOnce, nil
		}
	}
	if p.commandsAllowed(req) {
		return ask.AllowOnce, nil
	}
	why := ""
	if req.Reason != "" {
		why = " (" + req.Reason + ")"
	}
	return ask.Deny, fmt.Errorf("%s needs permission%s; allow it with --allow-tools %s (or a glob such as 'mcp__server__*'), or --dangerously-allow-all", req.Tool, why, req.Tool)
}

// commandsAllowed reports whether every command of req matches a
// TOOL(SPEC) entry of AllowTools.
func (p *PromptPolicy) commandsAllowed(req ask.Permission) bool {
	if len(req.Commands) == 0 || req.OnceOnly {
		return false
	}
	for _, c := range req.Commands {
		if !slices.ContainsFunc(p.AllowTools, func(pat string) bool {
			name, spec, ok := tool.CommandRule(pat)
			return ok && name == req.Tool && tool.MatchCommand(spec, c)
		}) {
			return false
		}
	}
	return true
}

// ApproveSampling implements ask.Approver.
func (p *PromptPolicy) ApproveSampling(ctx context.Context, req ask.Sampling) (bool, error) {
	if p.AllowSampling {
		return true, nil
	}
	return false, fmt.Errorf("sampling requests are declined in headless mode; allow them with --allow-sampling")
}

// Elicit implements ask.Eliciter: headless, every request is declined.
func (p *PromptPolicy) Elicit(ctx context.Context, req ask.Elicitation) (ask.ElicitReply, error) {
	return ask.ElicitReply{Action: ask.Decline}, nil
}

// Login implements ask.LoginPrompter: headless, no login is started; the
// server stays needs-auth until `otter mcp login`.
func (p *PromptPolicy) Login(ctx context.Context, req ask.Login) (ask.LoginReply, error) {
	return ask.LoginReply{Choice: ask.LoginLater}, nil
}
