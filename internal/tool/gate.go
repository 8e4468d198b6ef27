package tool

import (
	"context"
	"encoding/json"
	"strings"
)

// Gate is what a tool says of one call for the agent's permission check,
// when that depends on the call's arguments (see Gated): whether it asks,
// what the question shows, and what an answer "for this session" allows.
type Gate struct {
	// Ask says whether the call needs the person's consent, in place of
	// Info.NeedsConsent; Reason says why, for the person ("it reads
	// outside the project: /etc/hosts").
	Ask    bool
	Reason string
	// Commands are the shell commands the call would run, one per simple
	// command of its pipelines, lists and substitutions, as written
	// ("git status", "grep -n x file"). [permissions] rules of the form
	// TOOL(SPEC) — "run_command(git status:*)" — are matched against each
	// (MatchCommand), and allow the call only when every one is allowed.
	Commands []string
	// Unsplit says why the call's command could not be split into its
	// commands ("" when it could, or runs none): then no TOOL(SPEC) rule
	// allows it, and an answer for the session allows this call only.
	Unsplit string
	// Rules are what an answer "for this session" (or "always") allows
	// instead of the whole tool: [permissions] keys, tool names or
	// TOOL(SPEC) rules ("edit_file", "run_command(git status:*)"). Nil:
	// the tool.
	Rules []string
	// Diff is the change the call would make, as a unified diff of the
	// file on disk and the file after the call, shown with the question;
	// "" for none.
	Diff string
}

// Gated is a Tool whose need for consent depends on each call's
// arguments: read_file asks outside the project only, run_command's
// rules match its commands, edit_file shows its change.
type Gated interface {
	Gate(ctx context.Context, args json.RawMessage) Gate
}

type gateKey struct{}

// WithGate returns a context for running a Gated tool's call that carries
// the Gate the permission check decided on, so that the tool can refuse a
// call whose facts changed since (a path that now leads out of the
// project, where it led inside when it was checked and nobody was asked).
func WithGate(ctx context.Context, g Gate) context.Context {
	return context.WithValue(ctx, gateKey{}, g)
}

// GateFrom returns the Gate WithGate set; ok is false when the call was
// not checked by the agent (a person's own call).
func GateFrom(ctx context.Context) (g Gate, ok bool) {
	g, ok = ctx.Value(gateKey{}).(Gate)
	return g, ok
}

// CommandRule splits a [permissions] key of the form TOOL(SPEC), such as
// "run_command(git status:*)", into the tool's name and the spec; ok is
// false for a key of another form (a tool name or a glob).
func CommandRule(key string) (toolName, spec string, ok bool) {
	open := strings.IndexByte(key, '(')
	if open <= 0 || !strings.HasSuffix(key, ")") {
		return "", "", false
	}
	return key[:open], key[open+1 : len(key)-1], true
}

// MatchCommand reports whether command matches the spec of a TOOL(SPEC)
// rule, as Claude Code's Bash(…) rules do: "git status:*" matches "git
// status" and every command that goes on after it with a space ("git
// status --short"), not "git statusx"; "*" matches every command; a spec
// without ":*" matches the command exactly. Runs of spaces count as one.
func MatchCommand(spec, command string) bool {
	command = strings.Join(strings.Fields(command), " ")
	if spec == "*" {
		return true
	}
	prefix, wild := strings.CutSuffix(spec, ":*")
	prefix = strings.Join(strings.Fields(prefix), " ")
	if !wild {
		return command == prefix
	}
	return command == prefix || strings.HasPrefix(command, prefix+" ")
}
