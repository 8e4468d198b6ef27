package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/oauth"
	"github.com/otter-sh/otter/internal/schema"
)

// ElicitPolicy says how a headless front end answers a server that asks
// for input (elicitation/create): the `--elicit` flag.
type ElicitPolicy string

// The elicitation policies.
const (
	// ElicitAsk asks the person on the terminal: the message, then each
	// field with its default pre-filled.
	ElicitAsk ElicitPolicy = "ask"
	// ElicitAcceptDefaults accepts form requests with the schema's default
	// values. A form with a required field that has no default is
	// declined, and so is every URL-mode request (nobody would visit it).
	ElicitAcceptDefaults ElicitPolicy = "accept-defaults"
	// ElicitDecline declines every request.
	ElicitDecline ElicitPolicy = "decline"
	// ElicitCancel cancels every request.
	ElicitCancel ElicitPolicy = "cancel"
)

// ParseElicitPolicy parses the value of --elicit.
func ParseElicitPolicy(s string) (ElicitPolicy, error) {
	switch p := ElicitPolicy(s); p {
	case ElicitAsk, ElicitAcceptDefaults, ElicitDecline, ElicitCancel:
		return p, nil
	}
	return "", fmt.Errorf("unknown elicitation policy %q: use ask, accept-defaults, decline or cancel", s)
}

// PolicyAsker answers the core's questions without a TUI, by a fixed
// policy or, with ElicitAsk, by asking on a terminal (prompts on Out,
// answers read line by line from In). It implements ask.Asker:
//
//   - Elicit follows the policy.
//   - Login is handed to Prompter.
//   - ApproveTool and ApproveSampling ask with ElicitAsk and deny otherwise:
//     without a person to ask, nothing runs that was not asked for.
//
// Prompts are shown one at a time. Its methods are safe for concurrent use.
type PolicyAsker struct {
	policy   ElicitPolicy
	out      io.Writer
	prompter ask.LoginPrompter

	mu    sync.Mutex // one prompt at a time
	in    *bufio.Reader
	lines chan lineResult // the read in flight, if any
}

type lineResult struct {
	line string
	err  error
}

// NewPolicyAsker returns a PolicyAsker. in and out are used for
// ElicitAsk's prompts (the CLI passes stdin, or the terminal when stdin
// carries data, and stderr). prompter answers OAuth logins; nil means
// oauth's terminal prompter, which can only answer "later" (it has no
// input of its own: a caller that logs in passes one reading stdin).
func NewPolicyAsker(policy ElicitPolicy, in io.Reader, out io.Writer, prompter ask.LoginPrompter) *PolicyAsker {
	if out == nil {
		out = io.Discard
	}
	if prompter == nil {
		prompter = oauth.NewTerminalPrompter(strings.NewReader(""), out)
	}
	p := &PolicyAsker{policy: policy, out: out, prompter: prompter}
	if in != nil {
		p.in = bufio.NewReader(in)
	}
	return p
}

// Policy returns the elicitation policy.
func (p *PolicyAsker) Policy() ElicitPolicy { return p.policy }

// Elicit implements ask.Eliciter.
func (p *PolicyAsker) Elicit(ctx context.Context, req ask.Elicitation) (ask.ElicitReply, error) {
	switch p.policy {
	case ElicitDecline:
		p.note("otter: declined %s's request for input (--elicit decline)", req.Server)
		return ask.ElicitReply{Action: ask.Decline}, nil
	case ElicitCancel:
		p.note("otter: canceled %s's request for input (--elicit cancel)", req.Server)
		return ask.ElicitReply{Action: ask.Cancel}, nil
	case ElicitAcceptDefaults:
		if req.Mode == "url" {
			p.note("otter: declined %s's request to open %s (--elicit accept-defaults opens no URL)", req.Server, req.URL)
			return ask.ElicitReply{Action: ask.Decline}, nil
		}
		form, err := parseForm(req.Schema)
		if err != nil {
			return ask.ElicitReply{}, fmt.Errorf("elicitation from %s: %w", req.Server, err)
		}
		content := map[string]any{}
		for _, f := range form {
			switch {
			case f.Default != nil:
				content[f.Name] = f.Default
			case f.Required:
				// Accepting without a required value is not an answer the
				// server can use.
				p.note("otter: declined %s's request for input: %q is required and has no default (--elicit accept-defaults; --elicit ask fills it in)", req.Server, f.Name)
				return ask.ElicitReply{Action: ask.Decline}, nil
			}
		}
		return ask.ElicitReply{Action: ask.Accept, Content: content}, nil
	case ElicitAsk:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.askElicit(ctx, req)
	}
	return ask.ElicitReply{}, fmt.Errorf("unknown elicitation policy %q", p.policy)
}

// note tells the person, on out, what a policy answered for them.
func (p *PolicyAsker) note(format string, args ...any) {
	if p.out != nil {
		fmt.Fprintf(p.out, format+"\n", args...)
	}
}

// Login implements ask.LoginPrompter by handing the prompt to the
// prompter given to NewPolicyAsker.
func (p *PolicyAsker) Login(ctx context.Context, req ask.Login) (ask.LoginReply, error) {
	return p.prompter.Login(ctx, req)
}

// ApproveTool implements ask.Approver.
func (p *PolicyAsker) ApproveTool(ctx context.Context, req ask.Permission) (ask.PermissionDecision, error) {
	if p.policy != ElicitAsk || req.Unconfined {
		return ask.Deny, nil // outside the sandbox: only in the TUI, a command at a time
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "\notter: allow the tool %s", req.Tool)
	if req.Server != "" {
		fmt.Fprintf(p.out, " (server %s)", req.Server)
	}
	fmt.Fprintf(p.out, " to run with %s?\n[y] once  [s] for this session  [N] no\n> ", compactJSON(req.Arguments))
	line, err := p.readLine(ctx)
	if err != nil {
		return ask.Deny, ignoreEOF(err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return ask.AllowOnce, nil
	case "s", "session":
		return ask.AllowSession, nil
	}
	return ask.Deny, nil
}

// ApproveSampling implements ask.Approver.
func (p *PolicyAsker) ApproveSampling(ctx context.Context, req ask.Sampling) (bool, error) {
	if p.policy != ElicitAsk {
		return false, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "\notter: %s asks to use your model (up to %d tokens).\n", req.Server, req.MaxTokens)
	if req.SystemPrompt != "" {
		fmt.Fprintf(p.out, "  system: %s\n", req.SystemPrompt)
	}
	for _, m := range req.Messages {
		fmt.Fprintf(p.out, "  message: %s\n", m)
	}
	fmt.Fprint(p.out, "Allow? [y/N] ")
	line, err := p.readLine(ctx)
	if err != nil {
		return false, ignoreEOF(err)
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}

// askElicit asks the person; p.mu is held.
func (p *PolicyAsker) askElicit(ctx context.Context, req ask.Elicitation) (ask.ElicitReply, error) {
	fmt.Fprintf(p.out, "\notter: the server %s asks:\n  %s\n", req.Server, strings.ReplaceAll(req.Message, "\n", "\n  "))
	var form []schema.Field
	if req.Mode == "url" {
		fmt.Fprintf(p.out, "It wants you to open this URL:\n  %s\n", req.URL)
	} else {
		var err error
		if form, err = parseForm(req.Schema); err != nil {
			return ask.ElicitReply{}, fmt.Errorf("elicitation from %s: %w", req.Server, err)
		}
		for _, f := range form {
			fmt.Fprintf(p.out, "  - %s\n", describe(f))
		}
	}
	fmt.Fprint(p.out, "[a] accept (default)  [d] decline  [c] cancel\n> ")
	line, err := p.readLine(ctx)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return ask.ElicitReply{Action: ask.Cancel}, nil
		}
		return ask.ElicitReply{}, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "", "a", "accept", "y", "yes":
	case "d", "decline", "n", "no":
		return ask.ElicitReply{Action: ask.Decline}, nil
	default:
		return ask.ElicitReply{Action: ask.Cancel}, nil
	}
	if req.Mode == "url" {
		return ask.ElicitReply{Action: ask.Accept}, nil
	}
	content := map[string]any{}
	for _, f := range form {
		for {
			fmt.Fprintf(p.out, "%s: ", prompt(f))
			line, err := p.readLine(ctx)
			if err != nil {
				if errors.Is(err, io.EOF) {
					return ask.ElicitReply{Action: ask.Cancel}, nil
				}
				return ask.ElicitReply{}, err
			}
			v, ok, err := answer(f, strings.TrimSpace(line))
			if err != nil {
				fmt.Fprintf(p.out, "  %v\n", err)
				continue
			}
			if ok {
				content[f.Name] = v
			}
			break
		}
	}
	return ask.ElicitReply{Action: ask.Accept, Content: content}, nil
}

// readLine reads one answer, giving up when ctx is done. A read abandoned
// by a cancelled ctx hands its line to the next prompt. p.mu is held.
func (p *PolicyAsker) readLine(ctx context.Context) (string, error) {
	if p.in == nil {
		return "", fmt.Errorf("no terminal to ask on: %w", io.EOF)
	}
	if p.lines == nil {
		p.lines = make(chan lineResult, 1)
		go func(ch chan<- lineResult) {
			line, err := p.in.ReadString('\n')
			ch <- lineResult{strings.TrimRight(line, "\r\n"), err}
		}(p.lines)
	}
	select {
	case r := <-p.lines:
		p.lines = nil
		if r.err != nil && (r.err != io.EOF || r.line == "") {
			return "", r.err
		}
		return r.line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// parseForm reads the requested schema of a form-mode elicitation (a flat
// object of primitives, per the MCP spec): the required fields first, each
// group in the order the server listed them.
func parseForm(raw json.RawMessage) ([]schema.Field, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	o, err := schema.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("read the requested schema: %w", err)
	}
	return o.RequiredFirst(), nil
}

// choicesOf returns what the person picks from: the field's choices, or
// an array's items'.
func choicesOf(f schema.Field) []schema.Choice {
	if f.Type == "array" && f.Items != nil {
		return slices.Concat(f.Choices, f.Items.Choices)
	}
	return f.Choices
}

// choiceLabels are the choices as listed: a value the schema names (by
// enumNames or a title) as "Name (value)".
func choiceLabels(f schema.Field) []string {
	cs := choicesOf(f)
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Display()
	}
	return out
}

func label(f schema.Field) string {
	if f.Title != "" && f.Title != f.Name {
		return fmt.Sprintf("%s (%s)", f.Title, f.Name)
	}
	return f.Name
}

// describe is the field's line in the overview of a form.
func describe(f schema.Field) string {
	var b strings.Builder
	b.WriteString(label(f))
	kind := f.Type
	if labels := choiceLabels(f); len(labels) > 0 {
		kind = "one of " + strings.Join(labels, ", ")
		if f.Type == "array" {
			kind = "any of " + strings.Join(labels, ", ")
		}
	}
	if kind != "" {
		fmt.Fprintf(&b, " [%s]", kind)
	}
	if f.Required {
		b.WriteString(" required")
	}
	if f.Description != "" {
		fmt.Fprintf(&b, ": %s", f.Description)
	}
	return b.String()
}

// prompt asks for the field's value, showing the default.
func prompt(f schema.Field) string {
	p := label(f)
	labels := choiceLabels(f)
	switch {
	case f.Type == "boolean":
		p += " (y/n)"
	case f.Type == "array" && len(labels) > 0:
		p += " (comma-separated: " + strings.Join(labels, ", ") + ")"
	case len(labels) > 0:
		p += " (" + strings.Join(labels, " | ") + ")"
	}
	if f.Default != nil {
		d := fmt.Sprint(f.Default)
		if b, ok := f.Default.(bool); ok {
			d = map[bool]string{true: "y", false: "n"}[b]
		}
		p += fmt.Sprintf(" [%s]", d)
	}
	return p
}

// answer turns a line typed for f into its value, read and checked by
// schema.Field.Parse, so that the person can correct it here rather than
// have the whole form refused. An empty line takes the default. ok is
// false when the field is left out (an empty answer with no default to an
// optional field).
func answer(f schema.Field, line string) (v any, ok bool, err error) {
	if line == "" && f.Default != nil {
		return f.Default, true, nil
	}
	v, err = f.Parse(line)
	return v, v != nil, err
}
