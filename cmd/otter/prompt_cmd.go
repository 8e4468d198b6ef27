package main

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

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/mcphost"
	"github.com/otter-sh/otter/internal/render"
)

// settleTimeout bounds how long `otter -p` waits for MCP servers to connect
// before it starts; servers still pending then join late (their tools are
// offered from the next model call on).
const settleTimeout = 30 * time.Second

// Output formats of -p.
const (
	formatText       = "text"
	formatJSON       = "json"
	formatStreamJSON = "stream-json"
)

func addPromptFlags(root *cobra.Command) {
	f := root.Flags()
	f.StringP("print", "p", "", `run one prompt without the TUI and print the answer ("-" reads it from stdin)`)
	f.String("output-format", formatText, "with -p: text, json (one object at the end) or stream-json (one JSON object per line, as it happens)")
	f.StringSlice("allow-tools", nil, "with -p: let tools that would ask for permission run when their qualified name matches one of these glob patterns (e.g. 'mcp__github__*')")
	f.Bool("dangerously-allow-all", false, "with -p: let every tool run without asking")
	f.Bool("allow-sampling", false, "with -p: answer MCP servers' sampling requests with the configured model")
	f.String("model", "", "with -p: the model to use instead of [agent].model")
	f.Int("max-turns", 0, "with -p: the most tool rounds for the prompt (default [agent].max_turns)")

	// `echo hi | otter -p` is how other agent CLIs read stdin; here -p takes
	// the prompt as its value, so say how instead of pflag's bare message.
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if strings.Contains(err.Error(), "needs an argument: 'p' in -p") || strings.Contains(err.Error(), "needs an argument: --print") {
			return exitCode(2, fmt.Errorf(`%w: give the prompt as otter -p "PROMPT", or pipe it in with … | otter -p -`, err))
		}
		return err
	})
}

func promptRequested(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup("print")
	return f != nil && f.Changed
}

// checkPromptFlag catches `otter -p --flag …`, where -p took the next flag
// as its prompt (and cobra would blame the words after it).
func checkPromptFlag(cmd *cobra.Command) error {
	if !promptRequested(cmd) {
		return nil
	}
	prompt, _ := cmd.Flags().GetString("print")
	if name, isFlag := strings.CutPrefix(prompt, "--"); isFlag && cmd.Flags().Lookup(strings.SplitN(name, "=", 2)[0]) != nil {
		return fmt.Errorf("-p takes the prompt as its value, but got the flag %s: write otter -p \"PROMPT\" %s …", prompt, prompt)
	}
	return nil
}

// promptOptions are the -p flags.
type promptOptions struct {
	prompt        string
	format        string
	allowTools    []string
	allowAll      bool
	allowSampling bool
	model         string
	maxTurns      int
}

func readPromptFlags(cmd *cobra.Command) (promptOptions, error) {
	f := cmd.Flags()
	var o promptOptions
	var err error
	get := func(fn func() error) {
		if err == nil {
			err = fn()
		}
	}
	get(func() (e error) { o.prompt, e = f.GetString("print"); return })
	get(func() (e error) { o.format, e = f.GetString("output-format"); return })
	get(func() (e error) { o.allowTools, e = f.GetStringSlice("allow-tools"); return })
	get(func() (e error) { o.allowAll, e = f.GetBool("dangerously-allow-all"); return })
	get(func() (e error) { o.allowSampling, e = f.GetBool("allow-sampling"); return })
	get(func() (e error) { o.model, e = f.GetString("model"); return })
	get(func() (e error) { o.maxTurns, e = f.GetInt("max-turns"); return })
	if err != nil {
		return o, err
	}
	switch o.format {
	case formatText, formatJSON, formatStreamJSON:
	default:
		return o, fmt.Errorf("--output-format %q: use text, json or stream-json", o.format)
	}
	if o.maxTurns < 0 {
		return o, fmt.Errorf("--max-turns %d: give a positive number", o.maxTurns)
	}
	return o, nil
}

// promptText returns the prompt: the -p value, or stdin when it is "-" or
// empty with stdin not a terminal.
func promptText(arg string, stdin io.Reader) (string, error) {
	if arg == "-" || (strings.TrimSpace(arg) == "" && !isTerminal(stdin)) {
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

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func runPrompt(cmd *cobra.Command) error {
	o, err := readPromptFlags(cmd)
	if err != nil {
		return exitCode(2, err)
	}
	out := &promptPrinter{format: o.format, stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr(), start: time.Now()}
	err = runPromptWith(cmd, o, out)
	if err != nil && !out.printed && o.format != formatText {
		// A script reading json gets an answer on stdout even when otter
		// could not start the turn (no provider, a config error).
		out.result(err)
	}
	return err
}

func runPromptWith(cmd *cobra.Command, o promptOptions, out *promptPrinter) error {
	ctx := cmd.Context()
	text, err := promptText(o.prompt, cmd.InOrStdin())
	if err != nil {
		return exitCode(2, err)
	}
	logger, closeLog, err := mcpLogger(cmd)
	if err != nil {
		return exitCode(2, err)
	}
	defer closeLog()

	policy := &agent.Policy{AllowTools: o.allowTools, AllowAll: o.allowAll, AllowSampling: o.allowSampling}

	// The sampling handler needs the provider, which needs the config the
	// App loads: servers only start after it is set.
	var sampleMu sync.Mutex
	var sample func(ctx context.Context, server string, req *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error)
	a, err := app.New(ctx, app.Options{
		WorkDir:    flags.workDir,
		ConfigFile: flags.configFile,
		Asker:      policy,
		Sampler: func(ctx context.Context, server string, req *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
			sampleMu.Lock()
			fn := sample
			sampleMu.Unlock()
			out.sampling(server, o.allowSampling)
			return fn(ctx, server, req)
		},
		Logger:  logger,
		Version: version,
	})
	if err != nil {
		return exitCode(2, err)
	}
	defer func() {
		if err := a.Close(); err != nil {
			logger.Warn("stopping MCP servers", "err", err)
		}
	}()

	provider, model, err := llm.FromConfig(a.Config, nil)
	if err != nil {
		return exitCode(2, err)
	}
	if o.model != "" {
		model = o.model
	}
	out.provider, out.model = provider.Name(), model
	sampleMu.Lock()
	sample = agent.SamplingHandler(provider, model, policy)
	sampleMu.Unlock()
	maxTurns := a.Config.Agent.MaxTurns
	if o.maxTurns > 0 {
		maxTurns = o.maxTurns
	}

	a.Start(ctx)
	if len(a.MCP.Statuses()) > 0 {
		wctx, cancel := context.WithTimeout(ctx, settleTimeout)
		_ = a.MCP.WaitSettled(wctx)
		cancel()
		if ctx.Err() != nil {
			return exitCode(1, fmt.Errorf("interrupted while the MCP servers were starting: %w", ctx.Err()))
		}
		out.servers(a.MCP.Statuses())
	}

	ag := agent.New(agent.Options{
		Provider:     provider,
		Model:        model,
		Tools:        a.Tools,
		Approver:     policy,
		Permissions:  a.Config.Permissions,
		MaxTurns:     maxTurns,
		MaxTokens:    a.Config.Agent.MaxTokens,
		SystemPrompt: a.Config.Agent.SystemPrompt,
		ToolSearch:   agent.ToolSearchConfig(a.Config),
		Instructions: a.MCP.Instructions,
		WorkDir:      a.WorkDir,
		OnEvent:      out.event,
		Logger:       logger,
	})
	sendErr := ag.Send(ctx, text)
	out.result(sendErr)
	switch {
	case sendErr == nil:
		return nil
	case errors.Is(sendErr, context.Canceled):
		return exitCode(1, reported{sendErr}) // result said "interrupted"
	case errors.Is(sendErr, agent.ErrMaxTurns):
		return exitCode(1, sendErr)
	default:
		return exitCode(2, sendErr) // the provider failed: configuration or connection
	}
}

// reported is an error the user was already told about on stderr: main
// prints nothing more for it.
type reported struct{ err error }

func (reported) Error() string   { return "" }
func (r reported) Unwrap() error { return r.err }

// promptPrinter writes the answer on stdout and progress on stderr in the
// chosen format. Its methods are called from the agent's goroutines one at a
// time (the agent serialises events) and from the sampler.
type promptPrinter struct {
	format         string
	stdout, stderr io.Writer
	start          time.Time
	provider       string
	model          string

	mu        sync.Mutex
	final     agent.TurnFinished
	usage     agent.Usage
	calls     []promptToolCall // in the order the model made them
	callIndex map[string]int   // tool call ID → its index in calls
	printed   bool             // result has been printed
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
	Type       string           `json:"type"` // "result"
	Result     string           `json:"result"`
	IsError    bool             `json:"is_error"`
	Error      string           `json:"error,omitempty"`
	Canceled   bool             `json:"canceled,omitempty"`
	Truncated  bool             `json:"truncated,omitempty"` // the model stopped at its output limit
	Partial    bool             `json:"partial,omitempty"`   // result is what the model said before it was interrupted or failed
	Provider   string           `json:"provider"`
	Model      string           `json:"model"`
	ToolCalls  []promptToolCall `json:"tool_calls"`
	Usage      promptUsage      `json:"usage"`
	DurationMS int64            `json:"duration_ms"`
}

type promptUsage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CachedTokens     int64 `json:"cached_tokens"`      // of the input, read from the provider's prompt cache
	CacheWriteTokens int64 `json:"cache_write_tokens"` // of the input, written to it
}

func (p *promptPrinter) line(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	fmt.Fprintf(p.stdout, "%s\n", data)
}

// progress writes a line of progress on stderr.
func (p *promptPrinter) progress(format string, args ...any) {
	fmt.Fprintf(p.stderr, format+"\n", args...)
}

func (p *promptPrinter) servers(statuses []mcphost.Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range statuses {
		switch st.State {
		case mcphost.StateConnected:
			if p.format == formatStreamJSON {
				p.line(map[string]any{"type": "server", "name": st.Name, "state": st.State, "tools": st.Tools})
			}
		case mcphost.StateDisabled:
		default:
			p.progress("otter: %s", serverStateText(st.Name, st))
			if p.format == formatStreamJSON {
				p.line(map[string]any{"type": "server", "name": st.Name, "state": st.State, "error": st.Error})
			}
		}
	}
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

func (p *promptPrinter) event(ev agent.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case agent.TextDelta:
		if p.format == formatStreamJSON {
			p.line(map[string]any{"type": "text", "text": ev.Text})
		}
	case agent.ToolCallStarted:
		if p.callIndex == nil {
			p.callIndex = map[string]int{}
		}
		p.callIndex[ev.ID] = len(p.calls)
		p.calls = append(p.calls, promptToolCall{ID: ev.ID, Name: ev.Name, Args: ev.Args})
		p.progress("otter: → %s %s", ev.Name, truncateLine(string(ev.Args), 200))
		if p.format == formatStreamJSON {
			p.line(map[string]any{"type": "tool_call", "id": ev.ID, "name": ev.Name, "args": ev.Args})
		}
	case agent.ToolProgress:
		msg := ev.Progress.Message
		if ev.Progress.Total > 0 {
			msg = fmt.Sprintf("%.0f/%.0f %s", ev.Progress.Progress, ev.Progress.Total, msg)
		}
		// Named: with tools running in parallel their reports interleave.
		p.progress("otter:   … %s: %s", cmp.Or(p.callName(ev.ID), ev.ID), strings.TrimSpace(msg))
		if p.format == formatStreamJSON {
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
		if p.format == formatStreamJSON {
			out := map[string]any{"type": "tool_result", "id": c.ID, "name": c.Name, "is_error": c.IsError, "duration_ms": c.DurationMS}
			if c.Error != "" {
				out["error"] = c.Error
			}
			if ev.Result != nil {
				out["text"] = render.Model(ev.Result)
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
		ToolCalls:  p.calls,
		Usage:      promptUsage(p.usage),
		DurationMS: time.Since(p.start).Milliseconds(),
	}
	if res.ToolCalls == nil {
		res.ToolCalls = []promptToolCall{}
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
	case formatText:
		if res.Result != "" {
			fmt.Fprintln(p.stdout, strings.TrimRight(res.Result, "\n"))
		}
	case formatJSON, formatStreamJSON:
		p.line(res)
	}
}

// truncateLine shortens s to one line of at most n bytes.
func truncateLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
