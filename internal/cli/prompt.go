package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/attach"
	"github.com/otter-sh/otter/internal/instructions"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/localtools"
	"github.com/otter-sh/otter/internal/markdown"
	"github.com/otter-sh/otter/internal/render"
	"github.com/otter-sh/otter/internal/termtext"
)

// waitNoteAfter is how long -p waits for servers before it says so: a
// one-shot prompt waits for servers still starting (the Conversation's
// policy, app.DefaultServerWait), since it often has one model call only.
const waitNoteAfter = time.Second

// Output formats of -p.
const (
	FormatText       = "text"
	FormatJSON       = "json"
	FormatStreamJSON = "stream-json"
)

// PromptOptions are the options of `otter -p`.
type PromptOptions struct {
	Prompt        string // the -p value: the prompt, or "-" to read it from stdin
	Format        string // FormatText, FormatJSON or FormatStreamJSON
	AllowTools    []string
	AllowAll      bool
	AllowSampling bool
	Model         string // instead of [agent].model
	Provider      string // instead of [agent].provider
	// NoInstructions sends no instruction files (AGENTS.md and the like).
	NoInstructions bool
	// AttachOutside lets @path attach files outside the project.
	AttachOutside bool
	MaxTurns      int // instead of [agent].max_turns, when positive
	// Verbose prints the model's thinking (or reasoning summary) on
	// stderr as it arrives; without it thinking is not printed: stderr
	// is for progress, and thinking can be longer than the answer.
	Verbose bool
	// Session says which saved conversation the prompt continues
	// (--continue, --resume, --fork-session, --no-session).
	Session app.SessionOptions
}

// Check reports options that cannot work.
func (o PromptOptions) Check() error {
	switch o.Format {
	case FormatText, FormatJSON, FormatStreamJSON:
	default:
		return fmt.Errorf("--output-format %q: use text, json or stream-json", o.Format)
	}
	if o.MaxTurns < 0 {
		return fmt.Errorf("--max-turns %d: give a positive number", o.MaxTurns)
	}
	return nil
}

// promptText returns the prompt: the -p value, or stdin when it is "-".
func promptText(arg string, stdin io.Reader) (string, error) {
	if arg == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return "", fmt.Errorf("reading the prompt from stdin: %w", err)
		}
		arg = string(data)
	}
	if strings.TrimSpace(arg) == "" {
		return "", errors.New(`the prompt is empty: give it as otter -p "PROMPT", or pipe it in with otter -p -`)
	}
	return strings.TrimSpace(arg), nil
}

// RunPrompt is `otter -p`: it runs one prompt through an agent and prints
// the answer on stdout in o.Format, progress on stderr. o has passed
// Check: the command refuses flags that cannot work before it runs.
func RunPrompt(ctx context.Context, f *Factory, o PromptOptions) error {
	out := &promptPrinter{format: o.Format, stdout: f.IO.Out, stderr: f.IO.ErrOut, start: time.Now(), verbose: o.Verbose}
	if o.Format == FormatText && f.IO.IsStdoutTTY() {
		// A person reads it: the answer's Markdown is shown as the TUI
		// shows it. Piped, it stays as the model wrote it.
		out.markdown = &markdown.Options{Width: cmp.Or(f.IO.TerminalWidth(), 80), Dark: darkBackground(os.Getenv("COLORFGBG"))}
	}
	err := runPrompt(ctx, f, o, out)
	if err != nil && !out.printed && o.Format != FormatText {
		// A script reading json gets an answer on stdout even when otter
		// could not start the turn (no provider, a config error).
		out.result(err)
	}
	return err
}

// PrintPromptError writes err as -p's JSON result object (is_error, error)
// on w, for an error that came before the prompt could run — a flag, the
// command line: a script that asked for JSON reads its answer where the
// answer would have been. The message is as given (masked by the caller).
func PrintPromptError(w io.Writer, msg string) {
	p := &promptPrinter{format: FormatJSON, stdout: w, stderr: io.Discard, start: time.Now()}
	p.result(errors.New(msg))
}

func runPrompt(ctx context.Context, f *Factory, o PromptOptions, out *promptPrinter) error {
	policy := &PromptPolicy{AllowTools: o.AllowTools, AllowAll: o.AllowAll, AllowSampling: o.AllowSampling}
	if err := policy.check(); err != nil {
		return ExitCode(2, err)
	}
	arg := o.Prompt
	if strings.TrimSpace(arg) == "" && !f.IO.IsStdinTTY() {
		arg = "-" // an empty -p with stdin not a terminal: the prompt is piped in
	}
	text, err := promptText(arg, f.IO.In)
	if err != nil {
		return ExitCode(2, err)
	}
	logger, closeLog, err := f.headlessLogger()
	if err != nil {
		return ExitCode(2, err)
	}
	defer closeLog()

	opts := f.AppOptions(logger)
	opts.Asker = policy
	opts.SamplingApprover = samplingNotes{policy, out}
	opts.Model, opts.Provider = o.Model, o.Provider
	opts.NoInstructions = o.NoInstructions
	opts.Lazy = true // a server starts when the model needs it
	a, err := app.New(ctx, opts)
	if err != nil {
		return ExitCode(2, err)
	}
	defer func() {
		if err := a.Close(); err != nil {
			logger.Warn("stopping MCP servers", "err", err)
		}
	}()
	provider, model, err := a.Provider()
	if err != nil {
		return ExitCode(2, err)
	}
	out.provider, out.model = provider.Name(), model
	out.statuses = a.Servers
	if o.Session.Resume == ResumePicker {
		return ExitCode(2, errors.New("with -p, --resume needs the session's ID (otter -r ID -p …); `otter sessions list` lists them, or use --continue for the latest"))
	}
	// A session ID that names nothing is refused before any server starts.
	conv, err := a.NewConversation(ctx, app.ConversationOptions{
		Approver:    policy,
		MaxTurns:    o.MaxTurns,
		Session:     o.Session,
		ServerWait:  app.DefaultServerWait,
		OnSaveError: func(err error) { out.progress("otter: %v", err) },
		// A script cannot answer a question: files outside the project are
		// attached only when the flag said so beforehand.
		AllowOutside: func(context.Context, string) (bool, error) { return o.AttachOutside, nil },
	})
	if err != nil {
		return ExitCode(2, withSessionsHint(err))
	}
	for _, n := range conv.Notes() {
		out.progress("otter: %s", n)
	}
	if errors.Is(conv.Warning(), app.ErrSessionsDamaged) {
		out.progress("otter: %s", damagedSessionsHint)
	}
	noteInstructions(f.IO.ErrOut, a)

	a.Start(ctx)
	sendErr := conv.Send(ctx, text, out.event)
	conv.End(context.WithoutCancel(ctx), "other")
	out.sessionID = conv.SessionID()
	out.costs = conv.Costs()
	out.filesChanged = conv.FilesChanged()
	var outside *attach.OutsideError
	if errors.As(sendErr, &outside) {
		return ExitCode(2, fmt.Errorf("%w: add --attach-outside to attach files outside the project", sendErr))
	}
	var untrusted *app.UntrustedCommandError
	if errors.As(sendErr, &untrusted) {
		return ExitCode(2, fmt.Errorf("%w: run `otter trust` in %s (it lists what the project would run, and asks)", untrusted, untrusted.Dir))
	}
	if errors.Is(sendErr, app.ErrNotSent) && !errors.Is(sendErr, context.Canceled) {
		return ExitCode(2, sendErr) // an @-mention that cannot be read
	}
	out.result(sendErr)
	switch {
	case sendErr == nil:
		return nil
	case errors.Is(sendErr, context.Canceled):
		return ExitCode(1, Reported{sendErr}) // result said "interrupted"
	case errors.Is(sendErr, agent.ErrMaxTurns):
		return ExitCode(1, sendErr)
	default:
		return ExitCode(2, sendErr) // the provider failed: configuration or connection
	}
}

// samplingNotes tells, on stderr, of each sampling request a server makes
// and what the policy answers.
type samplingNotes struct {
	*PromptPolicy
	out *promptPrinter
}

func (s samplingNotes) ApproveSampling(ctx context.Context, req ask.Sampling) (bool, error) {
	s.out.sampling(req.Server, s.AllowSampling)
	return s.PromptPolicy.ApproveSampling(ctx, req)
}

// promptPrinter writes the answer on stdout and progress on stderr in the
// chosen format. Its methods are called from the agent's goroutines one at a
// time (the agent serialises events) and from the sampler.
type promptPrinter struct {
	format         string
	stdout, stderr io.Writer
	start          time.Time
	provider       string
	model          string
	sessionID      string // set once the turn ran
	filesChanged   []string
	// markdown, when set, renders a text answer for the terminal stdout is.
	markdown *markdown.Options
	statuses func() []app.ServerStatus

	mu        sync.Mutex
	final     agent.TurnFinished
	usage     agent.Usage
	costs     []agent.ModelUsage // every model call of the run, by model
	calls     []promptToolCall   // in the order the model made them
	callIndex map[string]int     // tool call ID → its index in calls
	printed   bool               // result has been printed
	waitNote  *time.Timer        // says which servers the prompt waits for

	verbose  bool // print thinking on stderr
	thinking bool // a line of thinking is open on stderr
}

// promptToolCall is a tool call in the json output.
type promptToolCall struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Args       json.RawMessage `json:"args,omitempty"`
	IsError    bool            `json:"is_error"`
	Error      string          `json:"error,omitempty"`
	DurationMS int64           `json:"duration_ms"`
}

// promptResult is the json output and the last line of stream-json.
type promptResult struct {
	Type      string           `json:"type"` // "result"
	Result    string           `json:"result"`
	IsError   bool             `json:"is_error"`
	Error     string           `json:"error,omitempty"`
	Canceled  bool             `json:"canceled,omitempty"`
	Truncated bool             `json:"truncated,omitempty"` // the model stopped at its output limit
	Partial   bool             `json:"partial,omitempty"`   // result is what the model said before it was interrupted or failed
	Provider  string           `json:"provider"`
	Model     string           `json:"model"`
	SessionID string           `json:"session_id,omitempty"` // the saved conversation: otter -r SESSION_ID continues it
	ToolCalls []promptToolCall `json:"tool_calls"`
	// FilesChanged are the files the model's edit_file and write_file
	// changed, absolute, in the order first changed (commands' changes
	// are not tracked).
	FilesChanged []string    `json:"files_changed"`
	Usage        promptUsage `json:"usage"`
	// CostUSD is what the run cost, compactions' summaries included; null
	// when a model used has no price (see [pricing]).
	CostUSD    *float64 `json:"cost_usd"`
	DurationMS int64    `json:"duration_ms"`
}

type promptUsage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CachedTokens     int64 `json:"cached_tokens"`      // of the input, read from the provider's prompt cache
	CacheWriteTokens int64 `json:"cache_write_tokens"` // of the input, written to it
	ReasoningTokens  int64 `json:"reasoning_tokens"`   // of the output, spent thinking
}

func (p *promptPrinter) line(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	fmt.Fprintf(termtext.Raw(p.stdout), "%s\n", data) // exact: JSON escapes the controls
}

// progress writes a line of progress on stderr.
func (p *promptPrinter) progress(format string, args ...any) {
	p.endThinking()
	fmt.Fprintf(p.stderr, format+"\n", args...)
}

// servers says which servers are not connected; p.mu is held.
func (p *promptPrinter) servers(statuses []app.ServerStatus) {
	for _, st := range statuses {
		switch st.State {
		case app.StateConnected:
			// -p approves nothing by itself: it says what it holds back.
			for _, l := range heldBackLines(st) {
				p.progress("otter: %s", l)
			}
			if p.format == FormatStreamJSON {
				line := map[string]any{"type": "server", "name": st.Name, "state": st.State, "tools": st.Tools}
				if len(st.HeldBack) > 0 || st.InstructionsHeldBack {
					var names []string
					for _, h := range st.HeldBack {
						names = append(names, h.Name)
					}
					line["held_back"], line["instructions_changed"] = names, st.InstructionsHeldBack
				}
				p.line(line)
			}
		case app.StateDisabled:
		case app.StateIdle:
			// Not started: it starts if the model needs one of its known tools.
			if p.format == FormatStreamJSON {
				p.line(map[string]any{"type": "server", "name": st.Name, "state": st.State, "tools": st.Tools})
			}
		default:
			p.progress("otter: %s", serverStateText(st.Name, st, nil))
			if p.format == FormatStreamJSON {
				p.line(map[string]any{"type": "server", "name": st.Name, "state": st.State, "error": st.Error})
			}
		}
	}
}

// waiting says which servers -p is still waiting for, each with the
// longest it may take.
func (p *promptPrinter) waiting(pending []app.PendingServer) {
	names := make([]string, len(pending))
	for i, s := range pending {
		names[i] = fmt.Sprintf("%s (at most %s)", s.Name, s.Within)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.progress("otter: waiting for MCP servers to start, so that the model is offered their tools: %s; "+
		"a shorter startup_timeout, or enabled = false, spares a server -p need not wait for", strings.Join(names, ", "))
}

func (p *promptPrinter) sampling(server string, allowed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if allowed {
		p.progress("otter: answering a sampling request from %s", server)
	} else {
		p.progress("otter: declined a sampling request from %s (allow with --allow-sampling)", server)
	}
}

func (p *promptPrinter) event(ev app.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := ev.(agent.ThinkingDelta); !ok {
		p.endThinking()
	}
	switch ev := ev.(type) {
	case app.WaitingForServers:
		p.waitNote = time.AfterFunc(waitNoteAfter, func() { p.waiting(ev.Servers) })
	case app.ServersReady:
		if p.waitNote != nil {
			p.waitNote.Stop()
		}
		if p.statuses != nil {
			p.servers(p.statuses())
		}
	case app.Attached:
		for _, it := range ev.Items {
			p.progress("otter: attached %s", it)
		}
	case agent.HookMessage:
		p.progress("otter: %s hook: %s", ev.Event, ev.Text)
	case app.Note:
		p.progress("otter: %s", ev.Text)
	case agent.Compacted:
		// The same words the TUI shows, and that the session keeps.
		p.progress("otter: %s", app.CompactedText(ev))
	case agent.NothingToGain:
		p.progress("otter: %s", app.NothingToGainText(ev))
	case agent.TextDelta:
		if p.format == FormatStreamJSON {
			p.line(map[string]any{"type": "text", "text": ev.Text})
		}
	case agent.ThinkingDelta:
		if p.format == FormatStreamJSON {
			p.line(map[string]any{"type": "thinking", "text": ev.Text, "redacted": ev.Redacted})
		}
		p.thinkingDelta(ev)
		return
	case agent.ToolCallStarted:
		if p.callIndex == nil {
			p.callIndex = map[string]int{}
		}
		p.callIndex[ev.ID] = len(p.calls)
		p.calls = append(p.calls, promptToolCall{ID: ev.ID, Name: ev.Name, Args: ev.Args})
		p.progress("otter: → %s %s", ev.Name, truncateLine(string(ev.Args), 200))
		if p.format == FormatStreamJSON {
			p.line(map[string]any{"type": "tool_call", "id": ev.ID, "name": ev.Name, "args": ev.Args})
		}
	case agent.ToolProgress:
		msg := ev.Progress.Message
		if ev.Progress.Total > 0 {
			msg = fmt.Sprintf("%.0f/%.0f %s", ev.Progress.Progress, ev.Progress.Total, msg)
		}
		// Named: with tools running in parallel their reports interleave.
		p.progress("otter:   … %s: %s", cmp.Or(p.callName(ev.ID), ev.ID), strings.TrimSpace(msg))
		if p.format == FormatStreamJSON {
			p.line(map[string]any{"type": "tool_progress", "id": ev.ID, "progress": ev.Progress.Progress, "total": ev.Progress.Total, "message": ev.Progress.Message})
		}
	case agent.ToolCallFinished:
		i, started := p.callIndex[ev.ID]
		if !started {
			i = len(p.calls)
			p.calls = append(p.calls, promptToolCall{ID: ev.ID, Name: ev.Name})
		}
		c := &p.calls[i]
		c.DurationMS = ev.Elapsed.Milliseconds()
		switch {
		case ev.Err != nil:
			c.IsError, c.Error = true, ev.Err.Error()
			p.progress("otter: ✗ %s: %s", ev.Name, ev.Err)
		case ev.Result != nil && ev.Result.IsError:
			c.IsError, c.Error = true, truncateLine(render.Model(ev.Result), 500)
			p.progress("otter: ✗ %s reported an error: %s", ev.Name, truncateLine(render.Model(ev.Result), 200))
		default:
			p.progress("otter: ✓ %s (%s)", ev.Name, ev.Elapsed.Round(time.Millisecond))
		}
		if p.format == FormatStreamJSON {
			out := map[string]any{"type": "tool_result", "id": c.ID, "name": c.Name, "is_error": c.IsError, "duration_ms": c.DurationMS}
			if c.Error != "" {
				out["error"] = c.Error
			}
			if ev.Result != nil {
				out["text"] = render.Model(ev.Result)
			}
			if ch, ok := localtools.ChangeOf(ev.Result); ok {
				out["file_changed"] = ch.Path
			}
			p.line(out)
		}
	case agent.Usage:
		p.usage = agent.Usage(llm.Usage(p.usage).Add(llm.Usage(ev)))
	case agent.Retrying:
		p.progress("otter: the model call failed (%v); retrying in %s", ev.Err, ev.Delay.Round(time.Millisecond))
	case agent.TurnFinished:
		p.final = ev
	}
}

// thinkingDelta prints a piece of thinking on stderr with --verbose: a
// block of thinking starts a line "otter: thinking: " that runs until
// something else is said.
func (p *promptPrinter) thinkingDelta(ev agent.ThinkingDelta) {
	if !p.verbose {
		return
	}
	text := ev.Text
	if ev.Redacted && text == "" {
		text = "[redacted by the provider]"
	}
	if text == "" {
		return
	}
	if !p.thinking {
		fmt.Fprint(p.stderr, "otter: thinking: ")
		p.thinking = true
	}
	fmt.Fprint(p.stderr, text)
}

// endThinking ends the line of thinking open on stderr.
func (p *promptPrinter) endThinking() {
	if p.thinking {
		fmt.Fprintln(p.stderr)
		p.thinking = false
	}
}

// callName returns the tool name of a started call.
func (p *promptPrinter) callName(id string) string {
	if i, ok := p.callIndex[id]; ok {
		return p.calls[i].Name
	}
	return ""
}

// result prints the final answer.
func (p *promptPrinter) result(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.printed = true
	res := promptResult{
		Type:       "result",
		Result:     p.final.Text,
		Canceled:   p.final.Canceled,
		Truncated:  p.final.Truncated,
		Provider:   p.provider,
		Model:      p.model,
		SessionID:  p.sessionID,
		ToolCalls:  p.calls,
		Usage:      promptUsage(p.usage),
		DurationMS: time.Since(p.start).Milliseconds(),
	}
	if res.ToolCalls == nil {
		res.ToolCalls = []promptToolCall{}
	}
	res.FilesChanged = p.filesChanged
	if res.FilesChanged == nil {
		res.FilesChanged = []string{}
	}
	if len(p.costs) > 0 {
		// The agent's ledger counts the summaries of compactions too.
		var u llm.Usage
		cost, priced := 0.0, true
		for _, c := range p.costs {
			// A call without token counts has no known cost.
			u, cost, priced = u.Add(c.Usage), cost+c.Cost, priced && c.Priced && c.Unreported == 0
		}
		res.Usage = promptUsage(u)
		if priced {
			res.CostUSD = &cost
		}
	}
	if err != nil {
		res.IsError, res.Error = true, err.Error()
	}
	switch {
	case res.Canceled:
		res.Partial = true
		p.progress("otter: interrupted; the answer is partial")
	case err != nil && res.Result != "":
		// A stream cut mid-answer, or max_turns: what was said is printed,
		// and marked as incomplete.
		res.Partial = true
		p.progress("otter: the answer is partial (the turn did not finish, see below)")
	}
	if res.Truncated {
		p.progress("otter: %s", agent.TruncatedNote)
	}
	switch p.format {
	case FormatText:
		switch {
		case res.Result == "":
		case p.markdown != nil:
			// The model's text is cleaned before it is styled, so that
			// the styling's own sequences reach the terminal.
			fmt.Fprintln(termtext.Raw(p.stdout), markdown.Render(termtext.Text(res.Result), *p.markdown))
		default:
			fmt.Fprintln(p.stdout, strings.TrimRight(termtext.Text(res.Result), "\n"))
		}
	case FormatJSON, FormatStreamJSON:
		p.line(res)
	}
}

// darkBackground reads a terminal's COLORFGBG ("15;0": white on black)
// for whether its background is dark; without it, most terminals are.
func darkBackground(colorfgbg string) bool {
	i := strings.LastIndexByte(colorfgbg, ';')
	switch colorfgbg[i+1:] {
	case "7", "15":
		return false
	}
	return true
}

// truncateLine shortens s to one line of at most n bytes.
func truncateLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// noteInstructions says on stderr which instruction files the model gets,
// which wait for the project's trust, and what the cap cut.
func noteInstructions(stderr io.Writer, a *app.App) {
	set := a.Instructions()
	for _, f := range set.Files {
		fmt.Fprintf(stderr, "otter: instructions from %s\n", f.Path)
	}
	if set.Cut {
		fmt.Fprintf(stderr, "otter: instruction files cut at %s ([instructions] max_bytes): %s\n", instructions.KiB(set.MaxBytes), strings.Join(set.CutPaths(), ", "))
	}
	if len(set.Held) > 0 {
		fmt.Fprintf(stderr, "otter: not reading %s: the project is not trusted (otter trust)\n", strings.Join(set.Held, ", "))
	}
	if r := a.TrustReport(); r.Trusted && len(r.Items) > 0 {
		var names []string
		for _, it := range r.Items {
			names = append(names, string(it.Kind)+" "+it.Name)
		}
		fmt.Fprintf(stderr, "otter: holding back what changed in %s since you trusted it (%s): run `otter trust` to review it\n", r.Dir, strings.Join(names, ", "))
	}
	for _, err := range set.Errors {
		fmt.Fprintf(stderr, "otter: %v\n", err)
	}
}
