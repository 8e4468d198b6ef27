package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/tool"
)

// ErrUnknownTool is wrapped when the model calls a tool the set does not
// hold (any longer).
var ErrUnknownTool = tool.ErrUnknownTool

// pendingCall is a tool call on its way through the permission layer.
type pendingCall struct {
	call     llm.ToolCall
	entry    tool.Entry
	readOnly bool
	gate     *tool.Gate // what a Gated tool said of the call
	err      error      // set when the call must not run
	result   llm.ToolResult
}

// runTools decides and runs the tool calls of one model response and
// returns one result per call, in order. Permission prompts are asked one
// at a time, before anything runs; then consecutive read-only calls run in
// parallel, and every other call runs alone, in the model's order.
func (a *Agent) runTools(ctx context.Context, calls []llm.ToolCall) []llm.ToolResult {
	pending := make([]*pendingCall, len(calls))
	for i, c := range calls {
		p := &pendingCall{call: c}
		pending[i] = p
		a.emit(ToolCallStarted{ID: c.ID, Name: c.Name, Args: c.Args})
		p.err = a.check(ctx, p)
	}

	for i := 0; i < len(pending); {
		if pending[i].err != nil || !pending[i].readOnly {
			a.runOne(ctx, pending[i])
			i++
			continue
		}
		j := i
		var wg sync.WaitGroup
		for ; j < len(pending) && pending[j].err == nil && pending[j].readOnly; j++ {
			wg.Add(1)
			go func(p *pendingCall) {
				defer wg.Done()
				a.runOne(ctx, p)
			}(pending[j])
		}
		wg.Wait()
		i = j
	}

	results := make([]llm.ToolResult, len(pending))
	for i, p := range pending {
		results[i] = p.result
	}
	return results
}

// check validates a call and asks for permission; a non-nil error means the
// call must not run and is what the model is told.
func (a *Agent) check(ctx context.Context, p *pendingCall) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("not run: %w", err)
	}
	if a.opts.Tools == nil {
		return fmt.Errorf("%w %q: no tools are available", ErrUnknownTool, p.call.Name)
	}
	e, ok := a.lookupTool(p.call.Name)
	if !ok {
		return fmt.Errorf("%w %q: it is not among the tools offered (it may belong to a server that disconnected)", ErrUnknownTool, p.call.Name)
	}
	p.entry = e
	if e.Info.HeldBack != "" {
		// Refused before anyone is asked: no permission makes it callable.
		return &tool.HeldBackError{Tool: e.Name, Server: e.Info.Server, Name: e.Info.Name, Reason: e.Info.HeldBack}
	}
	p.readOnly = e.Info.ReadOnly()
	var obj map[string]any
	if err := json.Unmarshal(p.call.Args, &obj); err != nil || obj == nil {
		return fmt.Errorf("invalid arguments for %s: they must be a JSON object, got %s", p.call.Name, truncate(string(p.call.Args), 200))
	}
	decision, err := a.preToolUse(ctx, p.call)
	if err != nil {
		return err
	}
	return a.permit(ctx, p, decision)
}

// permit applies the permission rules:
//  1. [permissions] config: "allow" runs, "deny" refuses, "ask" asks
//     (even for read-only tools); for a tool that runs commands
//     (tool.Gate.Commands), TOOL(SPEC) rules match each command, a
//     "deny" or "ask" of one counts for the call, and "allow" only when
//     every command is allowed;
//  2. tools (and command rules) allowed for this session run;
//  3. read-only tools (readOnlyHint) run, except built-ins that reach the
//     network or write files (tool.Info.NeedsConsent); a tool.Gated tool
//     says per call;
//  4. otherwise the Approver is asked.
//
// hook is a PreToolUse hook's permissionDecision: its "allow" runs the call
// where 1 ("ask") or 4 would ask, its "ask" asks where 2 and 3 would run
// the call. A "deny" rule refuses whatever a hook says: a hook only skips
// or forces the question.
func (a *Agent) permit(ctx context.Context, p *pendingCall, hook string) error {
	e, call := p.entry, p.call
	needs, reason := e.Info.NeedsConsent()
	var gate *tool.Gate
	if g, ok := e.Tool.(tool.Gated); ok {
		gt := g.Gate(ctx, call.Args)
		gate, needs, reason = &gt, gt.Ask, gt.Reason
		p.gate = gate
	}
	a.mu.Lock()
	rule := matchRule(a.settings.Permissions, e.Name)
	session := a.session[e.Name] || (a.turnAllow != nil && a.turnAllow(e.Name))
	cmdRule, cmdSession := "", false
	if gate != nil && gate.Commands != nil && gate.Unsplit == "" {
		cmdRule = commandsRule(a.settings.Permissions, e.Name, gate.Commands)
		cmdSession = commandsRule(sessionRules(a.session), e.Name, gate.Commands) == "allow"
	}
	a.mu.Unlock()
	switch {
	case rule == "deny" || cmdRule == "deny":
		return fmt.Errorf("%w: %s is denied by the [permissions] configuration", ErrDenied, e.Name)
	case cmdRule == "ask" && hook != "allow":
		reason = "the [permissions] configuration says ask for this command"
		rule = "ask"
	case rule == "allow", cmdRule == "allow", hook == "allow":
		return nil
	}
	forceAsk := hook == "ask"
	if rule == "ask" && cmdRule != "ask" {
		reason = "the [permissions] configuration says ask"
	}
	if forceAsk {
		reason = "a PreToolUse hook says ask"
	}
	if !forceAsk && (session || cmdSession || (rule == "" && !needs)) {
		return nil
	}
	if a.opts.Approver == nil {
		return fmt.Errorf("%w: %s needs the user's permission and no one can be asked", ErrDenied, e.Name)
	}
	q := ask.Permission{
		Tool:        e.Name,
		Server:      e.Info.Server,
		Arguments:   call.Args,
		ReadOnly:    e.Info.ReadOnly(),
		Destructive: e.Info.Destructive(),
		Reason:      reason,
		SaveTo:      a.permissionsFile(),
	}
	if gate != nil {
		q.Diff, q.Commands, q.Rules = gate.Diff, gate.Commands, gate.Rules
		q.OnceOnly = gate.Unsplit != ""
	}
	d, err := a.opts.Approver.ApproveTool(ctx, q)
	if ctx.Err() != nil {
		return fmt.Errorf("not run: %w", ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrDenied, err)
	}
	switch d {
	case ask.AllowOnce:
		return nil
	case ask.AllowSession, ask.AllowAlways:
		if q.OnceOnly {
			return nil // nothing wider can be allowed: see ask.Permission.OnceOnly
		}
		keys := q.Rules
		if keys == nil {
			keys = []string{e.Name}
		}
		a.mu.Lock()
		for _, k := range keys {
			a.session[k] = true
		}
		a.mu.Unlock()
		for _, k := range keys {
			a.recordAllowed(k)
			if d != ask.AllowAlways {
				continue
			}
			if a.opts.SavePermission == nil {
				a.opts.Logger.Warn("no place to save tool permissions; the tool is allowed for this session only", "tool", k)
			} else if err := a.opts.SavePermission(a.opts.WorkDir, k, "allow"); err != nil {
				a.opts.Logger.Warn("could not save the tool permission; it is allowed for this session only",
					"tool", k, "err", err)
			}
		}
		return nil
	}
	return fmt.Errorf("%w: the user denied permission to run %s", ErrDenied, e.Name)
}

// sessionRules are the TOOL(SPEC) rules allowed for the session, as
// [permissions] rules; session holds them beside the tools' names.
func sessionRules(session map[string]bool) map[string]string {
	var out map[string]string
	for k, ok := range session {
		if _, _, isRule := tool.CommandRule(k); isRule && ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = "allow"
		}
	}
	return out
}

// commandsRule is what the TOOL(SPEC) rules of rules say of a call of
// toolName that runs commands: "deny" when one command is denied, else
// "ask" when one asks, else "allow" when every one is allowed, else "".
// For one command the rule with the longest spec wins; between specs of
// equal length deny wins over ask, ask over allow.
func commandsRule(rules map[string]string, toolName string, commands []string) string {
	if len(rules) == 0 || len(commands) == 0 {
		return ""
	}
	rank := map[string]int{"allow": 1, "ask": 2, "deny": 3}
	worst, allAllowed := "", true
	for _, c := range commands {
		best, bestLen := "", -1
		for key, r := range rules {
			name, spec, ok := tool.CommandRule(key)
			if !ok || name != toolName || !tool.MatchCommand(spec, c) {
				continue
			}
			if len(spec) > bestLen || (len(spec) == bestLen && rank[r] > rank[best]) {
				best, bestLen = r, len(spec)
			}
		}
		if best != "allow" {
			allAllowed = false
		}
		if rank[best] > rank[worst] {
			worst = best
		}
	}
	switch {
	case worst == "deny", worst == "ask":
		return worst
	case allAllowed:
		return "allow"
	}
	return ""
}

// permissionsFile is where an "allow always" answer is saved, for the
// person; "" when it is not saved.
func (a *Agent) permissionsFile() string {
	if a.opts.SavePermission == nil || a.opts.PermissionsFile == nil {
		return ""
	}
	return a.opts.PermissionsFile(a.opts.WorkDir)
}

// matchRule returns the rule for name: an exact key wins, else the longest
// matching glob pattern; between patterns of equal length deny wins over
// ask, ask over allow.
func matchRule(rules map[string]string, name string) string {
	if r, ok := rules[name]; ok {
		return r
	}
	best, bestLen := "", -1
	rank := map[string]int{"allow": 1, "ask": 2, "deny": 3}
	for pat, r := range rules {
		if ok, _ := path.Match(pat, name); !ok {
			continue
		}
		if len(pat) > bestLen || (len(pat) == bestLen && rank[r] > rank[best]) {
			best, bestLen = r, len(pat)
		}
	}
	return best
}

// runOne runs a call (or reports why it did not run) and sets its result.
func (a *Agent) runOne(ctx context.Context, p *pendingCall) {
	var elapsed time.Duration // of a call that ran
	defer func() {
		r := p.result
		r.Elapsed = elapsed
		a.recordResult(r)
	}()
	if p.err != nil {
		a.emit(ToolCallFinished{ID: p.call.ID, Name: p.call.Name, Err: p.err})
		p.result = a.resultForModel(p.call, nil, p.err)
		return
	}
	if err := ctx.Err(); err != nil {
		err = fmt.Errorf("not run: %w", err)
		a.emit(ToolCallFinished{ID: p.call.ID, Name: p.call.Name, Err: err})
		p.result = a.resultForModel(p.call, nil, err)
		return
	}
	id := p.call.ID
	start := time.Now()
	a.emit(ToolCallRunning{ID: id})
	pctx := tool.WithProgress(ctx, func(pr tool.Progress) {
		a.emit(ToolProgress{ID: id, Progress: pr})
	})
	if p.gate != nil {
		pctx = tool.WithGate(pctx, *p.gate)
	}
	res, err := a.callTool(pctx, p.entry, p.call.Args)
	if err == nil && res == nil {
		err = errors.New("the tool returned no result")
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("canceled by the user: %w", ctx.Err())
		} else {
			err = fmt.Errorf("%s failed: %w", p.call.Name, err)
		}
		res = nil
	}
	elapsed = time.Since(start)
	p.result = a.resultForModel(p.call, res, err)
	if ctx.Err() == nil {
		a.postToolUse(ctx, p.call, res, err, &p.result)
	}
	a.emit(ToolCallFinished{ID: id, Name: p.call.Name, Result: res, Err: err, Elapsed: elapsed})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
