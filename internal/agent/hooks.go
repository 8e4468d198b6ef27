package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/otter-sh/otter/internal/hooks"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/tool"
)

// HookRunner runs the user's hooks for an event (see package hooks). The
// conversation that owns the agent provides it: it fills in the session,
// the working directory and the environment, and passes only the hooks the
// user trusts. Nil runs none.
type HookRunner func(ctx context.Context, ev hooks.Event, in hooks.Input) hooks.Outcome

// HookMessage is something the user should see about a hook: one that
// failed without blocking (a status other than 0 and 2, a timeout), one
// that blocked, or a hook's systemMessage.
type HookMessage struct {
	Event hooks.Event
	Text  string
	// Failed marks a hook that did not run as it should.
	Failed bool
}

// runHooks runs the hooks of ev, if any, and tells the user what they
// reported.
func (a *Agent) runHooks(ctx context.Context, ev hooks.Event, in hooks.Input) hooks.Outcome {
	if a.opts.Hooks == nil {
		return hooks.Outcome{}
	}
	out := a.opts.Hooks(ctx, ev, in)
	for _, f := range out.Failures {
		a.emit(HookMessage{Event: ev, Text: f.String(), Failed: true})
	}
	for _, m := range out.Messages {
		a.emit(HookMessage{Event: ev, Text: m})
	}
	return out
}

// preToolUse runs the PreToolUse hooks of a call. A hook that blocks (exit
// 2, or a "deny" decision) keeps the call from being made: the returned
// error is the call's result for the model, in the hook's words. A hook's
// "allow" skips the permission prompt but never beats a [permissions]
// "deny" rule, its "ask" asks where the session or a read-only tool would
// not (see permit).
func (a *Agent) preToolUse(ctx context.Context, call llm.ToolCall) (decision string, err error) {
	out := a.runHooks(ctx, hooks.PreToolUse, hooks.Input{ToolName: call.Name, ToolInput: call.Args, ToolUseID: call.ID})
	if out.Block {
		a.emit(HookMessage{Event: hooks.PreToolUse, Text: fmt.Sprintf("a PreToolUse hook blocked %s: %s", call.Name, out.Reason)})
		return "", fmt.Errorf("%w by a PreToolUse hook: %s", ErrDenied, out.Reason)
	}
	return out.Permission, nil
}

// maxHookResponse bounds the tool_response a PostToolUse hook is given: a
// larger result is passed as the text the model saw, which tool.Set has
// capped already.
const maxHookResponse = 1 << 20

// postToolUse runs the PostToolUse (or, for a call that failed,
// PostToolUseFailure) hooks of a call that ran, and adds what they say for
// the model to its result.
func (a *Agent) postToolUse(ctx context.Context, call llm.ToolCall, res *tool.Result, callErr error, result *llm.ToolResult) {
	in := hooks.Input{ToolName: call.Name, ToolInput: call.Args, ToolUseID: call.ID}
	ev := hooks.PostToolUse
	switch {
	case callErr != nil:
		ev, in.Error = hooks.PostToolUseFailure, callErr.Error()
	case res.IsError:
		ev, in.Error = hooks.PostToolUseFailure, result.Text
	}
	if ev == hooks.PostToolUse {
		if data, err := json.Marshal(res); err == nil && len(data) <= maxHookResponse {
			in.ToolResponse = data
		} else {
			in.ToolResponse, _ = json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": result.Text}}})
		}
	}
	out := a.runHooks(ctx, ev, in)
	var extra []string
	if out.Block && out.Reason != "" {
		extra = append(extra, fmt.Sprintf("[%s hook] %s", ev, out.Reason))
	}
	for _, c := range out.Context {
		extra = append(extra, fmt.Sprintf("[%s hook context] %s", ev, c))
	}
	if len(extra) > 0 {
		result.Text = strings.TrimRight(result.Text, "\n") + "\n\n" + strings.Join(extra, "\n")
	}
}

// stopHook runs the Stop hooks when the model has answered. It returns the
// message to go on with when a hook blocks the stop: the agent goes on once
// for each message the user sends (stop_hook_active tells a hook it is
// already going on, and a second block is not obeyed), so a hook cannot
// keep it working forever.
func (a *Agent) stopHook(ctx context.Context, active bool) (goOn string) {
	out := a.runHooks(ctx, hooks.Stop, hooks.Input{StopHookActive: active})
	if !out.Block || active {
		return ""
	}
	reason := strings.TrimSpace(out.Reason)
	a.emit(HookMessage{Event: hooks.Stop, Text: "a Stop hook asked the agent to go on: " + reason})
	return "Stop hook feedback:\n" + reason
}

// TurnOptions change the next message only, as a custom command's header
// does: Model answers it, and Allow names the tools that run without asking
// during it (a "deny" rule still refuses them).
type TurnOptions struct {
	Model string
	Allow func(tool string) bool
}

// SetNextTurn applies o to the next message sent (Send, SendMessages).
func (a *Agent) SetNextTurn(o TurnOptions) {
	a.mu.Lock()
	a.next = o
	a.mu.Unlock()
}
