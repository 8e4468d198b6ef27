package app

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/customcmd"
	"github.com/otter-sh/otter/internal/hooks"
	"github.com/otter-sh/otter/internal/skill"
)

// What the user's extensions do to a conversation: a typed /NAME that names
// a custom command is sent as the command's expanded body, /SKILLNAME asks
// the model to use that skill now, and the user's hooks run at the points
// Claude Code runs them (SessionStart, UserPromptSubmit, the tool calls,
// Stop, PreCompact, Notification, SessionEnd). All of it lives here, once,
// so the TUI and otter -p behave alike.

// runHooks runs the hooks of ev for this conversation.
func (c *Conversation) runHooks(ctx context.Context, ev hooks.Event, in hooks.Input) hooks.Outcome {
	return c.app.runHooks(ctx, c.SessionID(), ev, in)
}

// hookMessages tells the user, through emit, what out reported.
func hookMessages(ev hooks.Event, out hooks.Outcome, emit func(agent.Event)) {
	if emit == nil {
		return
	}
	for _, f := range out.Failures {
		emit(agent.HookMessage{Event: ev, Text: f.String(), Failed: true})
	}
	for _, m := range out.Messages {
		emit(agent.HookMessage{Event: ev, Text: m})
	}
}

// sessionStart runs the SessionStart hooks; what they print for the model
// goes with the next message.
func (c *Conversation) sessionStart(ctx context.Context, source string) {
	c.mu.Lock()
	c.startSource = source
	c.mu.Unlock()
	c.sessionStartWith(ctx, c.app.Extensions().Hooks, source)
}

// sessionStartWith runs set's SessionStart hooks for a start from source.
func (c *Conversation) sessionStartWith(ctx context.Context, set *hooks.Set, source string) {
	out := c.app.runHookSet(ctx, set, c.SessionID(), hooks.SessionStart, hooks.Input{Source: source})
	hookMessages(hooks.SessionStart, out, c.currentEmit())
	for _, f := range out.Failures {
		c.app.Logger.Warn("SessionStart hook", "err", f.String())
	}
	if len(out.Context) > 0 {
		c.mu.Lock()
		c.pendingContext = append(c.pendingContext, out.Context...)
		c.mu.Unlock()
	}
}

// Trust trusts the project with what r (TrustReport) listed and reloads
// the configuration, so that the project's servers start and its
// commands, skills, hooks and instruction files count from now on. The
// open session then runs the SessionStart hooks trusting enabled, as a
// fresh start would have: what they print goes with the next message.
func (c *Conversation) Trust(ctx context.Context, r TrustReport) (ReloadDiff, error) {
	if err := r.Approve(c.app.Paths); err != nil {
		return ReloadDiff{}, fmt.Errorf("trusting %s: %w", r.Dir, err)
	}
	before := c.app.Extensions().Hooks
	diff, err := c.app.Reload(ctx)
	if err != nil {
		return diff, fmt.Errorf("trusted %s, but reading its configuration again failed: %w", r.Dir, err)
	}
	c.mu.Lock()
	source := c.startSource
	c.mu.Unlock()
	c.sessionStartWith(ctx, c.app.Extensions().Hooks.Added(before), cmp.Or(source, "startup"))
	return diff, nil
}

// End runs the SessionEnd hooks (reason: "clear", "prompt_input_exit",
// "other"); a front end calls it as the person leaves.
func (c *Conversation) End(ctx context.Context, reason string) {
	out := c.runHooks(ctx, hooks.SessionEnd, hooks.Input{Reason: reason})
	for _, f := range out.Failures {
		c.app.Logger.Warn("SessionEnd hook", "err", f.String())
	}
}

// userPromptSubmit is the Outgoing hook that runs the UserPromptSubmit
// hooks on the message as typed: exit 2 refuses it (the person sees why),
// and what they print goes to the model with it, as does what the
// SessionStart hooks printed.
func (c *Conversation) userPromptSubmit(ctx context.Context, out *Outgoing) error {
	c.mu.Lock()
	pending := c.pendingContext
	c.pendingContext = nil
	c.mu.Unlock()
	res := c.runHooks(ctx, hooks.UserPromptSubmit, hooks.Input{Prompt: out.Typed})
	hookMessages(hooks.UserPromptSubmit, res, c.currentEmit())
	if res.Block {
		c.mu.Lock()
		c.pendingContext = pending // not spent: the message did not go
		c.mu.Unlock()
		return &HookRefusedError{Event: hooks.UserPromptSubmit, Reason: res.Reason}
	}
	for _, s := range append(pending, res.Context...) {
		out.Text = strings.TrimRight(out.Text, "\n") + "\n\n" + s
	}
	return nil
}

// HookRefusedError is a message a hook did not let through.
type HookRefusedError struct {
	Event  hooks.Event
	Reason string
}

func (e *HookRefusedError) Error() string {
	return fmt.Sprintf("a %s hook refused the message: %s", e.Event, e.Reason)
}

// notifyingApprover runs the Notification hooks before a question reaches
// the person, as Claude Code does when it needs a permission.
type notifyingApprover struct {
	ask.Approver
	c *Conversation
}

func (n notifyingApprover) ApproveTool(ctx context.Context, p ask.Permission) (ask.PermissionDecision, error) {
	n.c.runHooks(ctx, hooks.Notification, hooks.Input{
		Message:          fmt.Sprintf("otter needs your permission to use %s", p.Tool),
		NotificationType: "permission_prompt",
	})
	return n.Approver.ApproveTool(ctx, p)
}

// expandUserCommand turns a typed /NAME ARGS into what it stands for: a
// custom command's expanded body, a request to use skill NAME, or one of
// otter's built-in commands (InitCommand). ok is
// false for any other text. notes are for the person (shell lines not run).
func (c *Conversation) expandUserCommand(ctx context.Context, text string) (expanded string, cmd *customcmd.Command, notes []string, ok bool, err error) {
	if !strings.HasPrefix(text, "/") {
		return "", nil, nil, false, nil
	}
	name, args, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	name = strings.TrimSpace(name)
	ext := c.app.Extensions()
	for i := range ext.Commands {
		if ext.Commands[i].Name != name {
			continue
		}
		cm := ext.Commands[i]
		exp, err := cm.Expand(ctx, args, c.app.runCommandShell)
		if err != nil {
			return "", nil, nil, true, err
		}
		return exp.Prompt, &cm, exp.Notes, true, nil
	}
	for _, s := range ext.Skills {
		if s.Name == name {
			msg := fmt.Sprintf("Use the %q skill now: load it with the %s tool and follow it.", s.Name, skill.ToolName)
			if a := strings.TrimSpace(args); a != "" {
				msg += "\n\n" + a
			}
			return msg, nil, nil, true, nil
		}
	}
	if p, ok := builtinCommand(name, args); ok { // init.go
		return p, nil, nil, true, nil
	}
	return "", nil, nil, false, nil
}

// commandShellTimeout bounds a custom command's !`cmd` span.
const commandShellTimeout = 30 * time.Second

// maxCommandOutput bounds what one !`cmd` span puts into a prompt.
const maxCommandOutput = 64 << 10

// runCommandShell runs a custom command's !`cmd` span in the working
// directory, in its own process group (stopped with it at the timeout or
// when the turn is cancelled), and returns its output, capped.
func (a *App) runCommandShell(ctx context.Context, cmdline string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, commandShellTimeout)
	defer cancel()
	sh := os.Getenv("SHELL")
	if sh == "" {
		sh = "/bin/sh"
	}
	cmd := exec.CommandContext(ctx, sh, "-c", cmdline)
	cmd.Dir = a.WorkDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var out cappedOutput
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := out.String()
	if out.cut {
		text += fmt.Sprintf("\n[output cut at %d KiB]", maxCommandOutput>>10)
	}
	if ctx.Err() != nil {
		return text, fmt.Errorf("stopped after %s", commandShellTimeout)
	}
	if err != nil {
		return text, fmt.Errorf("%s: %w", cmdline, err)
	}
	return text, nil
}

type cappedOutput struct {
	strings.Builder
	cut bool
}

func (c *cappedOutput) Write(p []byte) (int, error) {
	n := len(p)
	if room := maxCommandOutput - c.Len(); n > room {
		c.cut = true
		p = p[:max(room, 0)]
	}
	c.Builder.Write(p)
	return n, nil // the rest is read and dropped
}
