// Package hooks runs the user's hook commands at points of a conversation,
// under the contract Claude Code defined and Codex and Gemini CLI follow, so
// that hook scripts written for those tools work with otter unchanged but
// for the tool names they match (otter's are mcp__SERVER__TOOL and its
// built-ins' own names).
//
// A hook is a shell command. It gets one JSON object on stdin (see Input),
// the project directory in OTTER_PROJECT_DIR and CLAUDE_PROJECT_DIR, and
// answers by its exit status and output:
//
//   - exit 0 passes. Its stdout may be a JSON object that decides
//     (decision/reason, hookSpecificOutput.permissionDecision,
//     additionalContext, continue/stopReason, systemMessage); for
//     UserPromptSubmit and SessionStart, plain stdout is context for the
//     model.
//   - exit 2 blocks: the tool call is not made and stderr is its result for
//     the model (PreToolUse), the prompt is not sent and the user sees why
//     (UserPromptSubmit), the agent goes on with stderr as its next
//     instruction (Stop), or stderr reaches the model after the call
//     (PostToolUse).
//   - any other status is a non-blocking error that the user is shown.
//
// Every hook that matches an event runs at once, in parallel, each in its
// own process group, killed with that group at its timeout (60 s unless
// set). The package decides nothing about trust: the caller passes only the
// hooks it may run (a project's only once the project is trusted).
package hooks

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Event is a point of the conversation where hooks run.
type Event string

// The events, named as Claude Code names them.
const (
	SessionStart       Event = "SessionStart"
	UserPromptSubmit   Event = "UserPromptSubmit"
	PreToolUse         Event = "PreToolUse"
	PostToolUse        Event = "PostToolUse"
	PostToolUseFailure Event = "PostToolUseFailure"
	Stop               Event = "Stop"
	PreCompact         Event = "PreCompact"
	SessionEnd         Event = "SessionEnd"
	Notification       Event = "Notification"
)

// Events lists every event otter runs hooks for, in the order they happen.
var Events = []Event{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse,
	PostToolUseFailure, Stop, PreCompact, SessionEnd, Notification}

// Valid reports whether e is one of Events.
func (e Event) Valid() bool { return slices.Contains(Events, e) }

// matchField is what a group's matcher is tested against for e: the tool
// name for tool events, the source or trigger for SessionStart and
// PreCompact, the notification's type; "" for events without a matcher
// (every group of theirs runs).
func (e Event) matchField(in Input) string {
	switch e {
	case PreToolUse, PostToolUse, PostToolUseFailure:
		return in.ToolName
	case SessionStart:
		return in.Source
	case PreCompact:
		return in.Trigger
	case SessionEnd:
		return in.Reason
	case Notification:
		return in.NotificationType
	}
	return ""
}

// DefaultTimeout is how long a hook may run when its timeout is not set:
// Claude Code's default, so that scripts written for it keep their time.
const DefaultTimeout = 60 * time.Second

// Command is one hook: a shell command run by /bin/sh -c.
type Command struct {
	Command string
	// Timeout is how long it may run; 0 means DefaultTimeout.
	Timeout time.Duration
	// Source is where it was configured ("~/.config/otter/config.toml"),
	// for listing and for messages.
	Source string
}

// Group is a matcher and the hooks that run when it matches.
type Group struct {
	// Matcher is a regular expression matched against the whole of the
	// event's match field (a tool name for tool events): "Write" matches
	// only Write, "mcp__github__.*" every GitHub tool. "" and "*" match
	// everything.
	Matcher string
	Hooks   []Command
}

// Config is every configured hook by event.
type Config map[Event][]Group

// Set is a compiled Config, ready to run.
type Set struct {
	groups map[Event][]compiledGroup
}

type compiledGroup struct {
	Group
	re *regexp.Regexp // nil: matches everything
}

// ConfigError is a hook configuration that cannot be used: an unknown event,
// a matcher that is not a regular expression, a hook without a command.
type ConfigError struct {
	Event  Event
	Source string // the file that configured it
	Msg    string
}

func (e *ConfigError) Error() string {
	if e.Source != "" {
		return fmt.Sprintf("%s: hooks.%s: %s", e.Source, e.Event, e.Msg)
	}
	return fmt.Sprintf("hooks.%s: %s", e.Event, e.Msg)
}

// New compiles cfg. It refuses an unknown event or a matcher that is not a
// regular expression, naming where it was configured.
func New(cfg Config) (*Set, error) {
	s := &Set{groups: map[Event][]compiledGroup{}}
	for ev, groups := range cfg {
		for _, g := range groups {
			src := ""
			if len(g.Hooks) > 0 {
				src = g.Hooks[0].Source
			}
			if !ev.Valid() {
				return nil, &ConfigError{Event: ev, Source: src, Msg: "unknown event; the events are " + eventList()}
			}
			cg := compiledGroup{Group: g}
			if m := g.Matcher; m != "" && m != "*" {
				re, err := regexp.Compile("^(?:" + m + ")$")
				if err != nil {
					return nil, &ConfigError{Event: ev, Source: src, Msg: fmt.Sprintf("matcher %q is not a regular expression: %v", m, err)}
				}
				cg.re = re
			}
			for _, h := range g.Hooks {
				if strings.TrimSpace(h.Command) == "" {
					return nil, &ConfigError{Event: ev, Source: h.Source, Msg: "a hook has no command"}
				}
			}
			s.groups[ev] = append(s.groups[ev], cg)
		}
	}
	return s, nil
}

func eventList() string {
	names := make([]string, len(Events))
	for i, e := range Events {
		names[i] = string(e)
	}
	return strings.Join(names, ", ")
}

// Matching returns the hooks that run for ev with in, each command once
// (Claude Code runs an identical command once even when several groups
// match).
func (s *Set) Matching(ev Event, in Input) []Command {
	if s == nil {
		return nil
	}
	field := ev.matchField(in)
	var out []Command
	seen := map[string]bool{}
	for _, g := range s.groups[ev] {
		if g.re != nil && !g.re.MatchString(field) {
			continue
		}
		for _, h := range g.Hooks {
			if seen[h.Command] {
				continue
			}
			seen[h.Command] = true
			out = append(out, h)
		}
	}
	return out
}

// Listed is one configured hook, for /hooks.
type Listed struct {
	Event   Event
	Matcher string
	Command
}

// List returns every configured hook, by event in the order of Events.
func (s *Set) List() []Listed {
	if s == nil {
		return nil
	}
	var out []Listed
	for _, ev := range Events {
		for _, g := range s.groups[ev] {
			for _, h := range g.Hooks {
				out = append(out, Listed{Event: ev, Matcher: g.Matcher, Command: h})
			}
		}
	}
	return out
}

// Empty reports whether no hook is configured.
func (s *Set) Empty() bool { return s == nil || len(s.groups) == 0 }

// Added is the hooks of s that before lacks (the same command from the
// same place for the same event), for running only what a change of
// configuration brought in — what trusting a project enabled, say.
func (s *Set) Added(before *Set) *Set {
	out := &Set{groups: map[Event][]compiledGroup{}}
	if s == nil {
		return out
	}
	type key struct {
		ev                       Event
		matcher, command, source string
	}
	had := map[key]bool{}
	for _, l := range before.List() {
		had[key{l.Event, l.Matcher, l.Command.Command, l.Source}] = true
	}
	for ev, groups := range s.groups {
		for _, g := range groups {
			ng := g
			ng.Hooks = slices.DeleteFunc(slices.Clone(g.Hooks), func(h Command) bool {
				return had[key{ev, g.Matcher, h.Command, h.Source}]
			})
			if len(ng.Hooks) > 0 {
				out.groups[ev] = append(out.groups[ev], ng)
			}
		}
	}
	return out
}
