// Package agent is otter's agent loop: it sends the conversation to a model,
// streams the answer to a front end, runs the tool calls the model makes
// (built-in and MCP tools alike) through a permission layer, returns their
// results and repeats until the model gives a final answer. It also answers
// MCP servers' sampling requests with the configured model.
//
// The package is UI-agnostic: the TUI and `otter -p` are front ends that
// receive Events and answer questions through ask.Approver; the headless
// policies that answer without a person are internal/cli's.
//
// It imports ask, compact, hooks, llm, render and tool of otter's
// packages; never config, app, mcphost or a front end, and it names no CLI
// flag.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/render"
	"github.com/otter-sh/otter/internal/tool"
)

// DefaultMaxTurns bounds the tool rounds per user message when
// Options.MaxTurns is 0.
const DefaultMaxTurns = 50

var (
	// ErrMaxTurns is wrapped by the error of a message that stopped after
	// max_turns tool rounds without a final answer.
	ErrMaxTurns = errors.New("the model did not finish within max_turns tool rounds")
	// ErrDenied is wrapped when a tool call was not allowed to run.
	ErrDenied = errors.New("permission to run the tool was denied")
	// ErrBusy is returned by Send while another message is in progress.
	ErrBusy = errors.New("the agent is still working on the previous message")
	// ErrNoProvider is returned by Send when the agent has no provider.
	ErrNoProvider = llm.ErrNoProvider
)

// Options configure an Agent.
type Options struct {
	Provider llm.Provider
	Model    string
	// Tools is the merged tool set; its Entries at the start of each model
	// call are what the model is offered.
	Tools *tool.Set
	// Approver answers tool permission prompts; nil denies every call that
	// would need to ask.
	Approver ask.Approver
	// Permissions is the [permissions] table: qualified tool names or glob
	// patterns (path.Match) mapped to "allow", "ask" or "deny".
	Permissions map[string]string
	MaxTurns    int // tool rounds per message; 0 = DefaultMaxTurns
	MaxTokens   int // per model call; 0 = the provider's default
	// SystemPrompt is appended to otter's own ([agent].system_prompt).
	SystemPrompt string
	// Skills is the skills' catalog, a section of the system prompt of its
	// own (each skill under where it comes from: the user's or the
	// project's), before SystemPrompt.
	Skills string
	// ToolSearch says when MCP tools are deferred behind tool_search.
	ToolSearch ToolSearch
	// CompactAt is the share of the context window at which the
	// conversation is compacted ([agent] compact_at); 0 = the default.
	CompactAt float64
	// Thinking is how much the model reasons before answering.
	Thinking llm.Thinking
	// Facts returns the limits and price of a provider's model ([providers]
	// and [pricing] over the built-in table); nil = llm.Facts without a
	// config.
	Facts func(provider, model string) llm.ModelFacts
	// Windows keeps the context windows providers stated (asked, or in a
	// refusal); nil keeps them for this agent only.
	Windows *llm.WindowCache
	// Instructions returns the connected MCP servers' instructions by
	// server name; may be nil.
	Instructions func() map[string]string
	// UserInstructions returns the person's instruction files (AGENTS.md
	// and the like) as a section of the system prompt, read again only when
	// they change so that the prompt, and the provider's cache of it, stays
	// the same between turns; may be nil.
	UserInstructions func() string
	WorkDir          string
	// OnEvent receives events; it is called from the goroutine running
	// Send and from tool goroutines (never concurrently), and must not
	// block for long. May be nil.
	OnEvent func(Event)
	// SavePermission persists an "allow always" answer (the front end's
	// config file); nil keeps such an answer for this session only.
	SavePermission func(workDir, pattern, decision string) error
	// Hooks runs the user's hooks at the tool calls and when the model
	// has answered (PreToolUse, PostToolUse, PostToolUseFailure, Stop); nil
	// runs none.
	Hooks HookRunner
	// PermissionsFile names, for the person asked, where SavePermission
	// saves the answers given in workDir; may be nil.
	PermissionsFile func(workDir string) string
	// ProviderHelp says how to configure a model provider: the error of a
	// message sent without one ends with it.
	ProviderHelp string
	// Recorder saves the conversation as it grows (a session store); nil
	// saves nothing. SetRecorder replaces it.
	Recorder Recorder
	// Now returns the current time for the system prompt; nil = time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Settings are the parts of Options that come from the [agent] and
// [permissions] config tables; Configure replaces them after a config
// reload, without touching the conversation.
type Settings struct {
	Permissions  map[string]string
	MaxTurns     int
	MaxTokens    int
	SystemPrompt string
	Skills       string
	ToolSearch   ToolSearch
	CompactAt    float64
	// Thinking is how much the model reasons before answering
	// ([providers.NAME] thinking, or the front end's choice).
	Thinking llm.Thinking
}

// settings returns o's Settings.
func (o Options) settings() Settings {
	return Settings{Permissions: o.Permissions, MaxTurns: o.MaxTurns, MaxTokens: o.MaxTokens, SystemPrompt: o.SystemPrompt, Skills: o.Skills, ToolSearch: o.ToolSearch, CompactAt: o.CompactAt, Thinking: o.Thinking}
}

// normalized returns s with defaults applied and the permission decisions
// lower-cased, in a map of its own.
func (s Settings) normalized() Settings {
	if s.MaxTurns <= 0 {
		s.MaxTurns = DefaultMaxTurns
	}
	perms := make(map[string]string, len(s.Permissions))
	for k, v := range s.Permissions {
		perms[k] = strings.ToLower(strings.TrimSpace(v))
	}
	s.Permissions = perms
	return s
}

// Agent holds one conversation with a model.
type Agent struct {
	opts Options
	busy sync.Mutex // held by Send

	mu       sync.Mutex // guards the fields below
	provider llm.Provider
	model    string
	history  []llm.Message
	session  map[string]bool // tools allowed for this session
	// turnAllow is the running message's TurnOptions.Allow.
	turnAllow func(tool string) bool
	// next is what SetNextTurn chose for the next message only.
	next     TurnOptions
	settings Settings
	recorder Recorder
	deferred deferState  // deferred tools loaded in this conversation
	window   windowState // token accounting (window.go)

	emitMu sync.Mutex
}

// New returns an Agent.
func New(opts Options) *Agent {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Windows == nil {
		opts.Windows = llm.NewWindowCache("")
	}
	return &Agent{
		opts:     opts,
		provider: opts.Provider,
		model:    opts.Model,
		session:  map[string]bool{},
		settings: opts.settings().normalized(),
		recorder: opts.Recorder,
	}
}

// noProvider is the error of a message sent with no model provider:
// ErrNoProvider, with how to configure one.
func (a *Agent) noProvider() error {
	if a.opts.ProviderHelp == "" {
		return fmt.Errorf("%w", llm.ErrNoProvider)
	}
	return fmt.Errorf("%w.\n\n%s", llm.ErrNoProvider, a.opts.ProviderHelp)
}

// Configure replaces the settings from the config (after a reload). A
// message in progress finishes with the settings it started with, except
// for permissions, which apply to every tool call from now on. Tools
// allowed for this session stay allowed.
func (a *Agent) Configure(s Settings) {
	s = s.normalized()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.settings = s
}

// SetProvider switches the provider and model for the following messages
// (after a config reload or a model change); the conversation is kept. A
// recorder that is a ModelRecorder is told of a change.
func (a *Agent) SetProvider(p llm.Provider, model string) {
	a.mu.Lock()
	changed := p != nil && (a.provider == nil || a.provider.Name() != p.Name() || a.model != model)
	a.provider, a.model = p, model
	rec := a.recorder
	a.mu.Unlock()
	if mr, ok := rec.(ModelRecorder); ok && changed {
		mr.SetModel(p.Name(), model)
	}
}

// SetThinking changes how much the model reasons, from the next model
// call on.
func (a *Agent) SetThinking(t llm.Thinking) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.settings.Thinking = t
}

// Model returns the model in use.
func (a *Agent) Model() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.model
}

// Messages returns a copy of the conversation so far.
func (a *Agent) Messages() []llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]llm.Message(nil), a.history...)
}

// Reset starts a new conversation. Tools allowed for the session stay
// allowed.
func (a *Agent) Reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.history = nil
	a.newConversation()
}

func (a *Agent) appendMessage(m llm.Message) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.history = append(a.history, m)
}

func (a *Agent) emit(ev Event) {
	if a.opts.OnEvent == nil {
		return
	}
	a.emitMu.Lock()
	defer a.emitMu.Unlock()
	a.opts.OnEvent(ev)
}

// Send adds a user message to the conversation and works on it until the
// model gives a final answer, the context is canceled, max_turns tool
// rounds were run, or the provider fails; it always ends with a
// TurnFinished event. It returns nil on a final answer, the context's error
// when canceled, and otherwise the error (also in TurnFinished.Err). The
// conversation is kept in every case, so a later Send continues it.
func (a *Agent) Send(ctx context.Context, text string) error {
	return a.SendMessages(ctx, llm.Message{Role: llm.RoleUser, Text: text})
}

// SendMessages is Send for messages built by the front end: a user message
// with images (resources attached with @-mentions), or an MCP prompt's
// messages with their roles. They are added to the conversation in order.
func (a *Agent) SendMessages(ctx context.Context, msgs ...llm.Message) error {
	if !a.busy.TryLock() {
		return ErrBusy
	}
	defer a.busy.Unlock()

	a.mu.Lock()
	provider, model, settings := a.provider, a.model, a.settings
	turn := a.next
	a.next = TurnOptions{}
	if turn.Model != "" {
		model = turn.Model
	}
	a.turnAllow = turn.Allow
	a.mu.Unlock()
	if provider == nil {
		err := a.noProvider()
		a.emit(TurnFinished{Err: err})
		return err
	}
	for _, m := range msgs {
		a.appendRecorded(m, llm.Usage{})
	}

	a.learnWindow(ctx, provider, model) // before the tools, whose budget follows the window
	lastText := ""
	stopHookActive := false
	for rounds := 0; ; {
		tools := a.offeredTools(provider, model, settings.ToolSearch) // before the system prompt, which names deferred tools' servers
		req := llm.Request{
			Model:     model,
			System:    a.systemPrompt(settings),
			Messages:  a.Messages(),
			Tools:     tools,
			MaxTokens: settings.MaxTokens,
			Thinking:  settings.Thinking,
		}
		d := a.newDraft()
		resp, err := a.streamFitted(ctx, provider, req, settings, func(ev llm.Event) {
			switch ev := ev.(type) {
			case llm.TextDelta:
				a.emit(TextDelta(ev))
				d.add(ev.Text)
			case llm.ReasoningDelta:
				a.emit(ThinkingDelta(ev))
			case llm.Retrying:
				d.restart()
				a.emit(Retrying(ev))
			}
		})
		if resp == nil {
			resp = &llm.Response{}
		}
		// Usage is told once the answer is in the history its count covers,
		// so that Context read on hearing it adds up (it fell back to an
		// estimate of the messages alone: a meter at 0 % while a tool ran).
		usage := func() {
			if resp.Usage != (llm.Usage{}) {
				a.emit(Usage(resp.Usage))
			}
		}
		if err != nil {
			canceled := ctx.Err() != nil
			if canceled || resp.Text != "" {
				// Keep what was said; tool calls of a cut stream are dropped.
				a.appendRecorded(llm.Message{Role: llm.RoleAssistant, Text: resp.Text, Interrupted: true}, resp.Usage)
			}
			usage()
			if canceled {
				a.emit(TurnFinished{Text: resp.Text, Canceled: true})
				return ctx.Err()
			}
			a.emit(TurnFinished{Text: resp.Text, Err: err})
			return err
		}
		if resp.Text != "" {
			lastText = resp.Text
		}
		a.appendRecorded(llm.Message{Role: llm.RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls, Reasoning: resp.Reasoning}, resp.Usage)
		usage()
		if len(resp.ToolCalls) == 0 {
			if goOn := a.stopHook(ctx, stopHookActive); goOn != "" && ctx.Err() == nil {
				stopHookActive = true
				a.appendRecorded(llm.Message{Role: llm.RoleUser, Text: goOn}, llm.Usage{})
				continue
			}
			a.emit(TurnFinished{Text: resp.Text, Truncated: resp.StopReason == llm.StopMaxTokens})
			return nil
		}

		results := a.runTools(ctx, resp.ToolCalls)
		a.appendMessage(llm.Message{Role: llm.RoleTool, ToolResults: results})
		if ctx.Err() != nil {
			a.emit(TurnFinished{Text: lastText, Canceled: true})
			return ctx.Err()
		}
		rounds++
		if rounds >= settings.MaxTurns {
			unit := "tool rounds"
			if rounds == 1 {
				unit = "tool round"
			}
			err := fmt.Errorf("%w: stopped after %d %s without a final answer; send another message to let it continue, or raise [agent] max_turns", ErrMaxTurns, rounds, unit)
			a.emit(TurnFinished{Text: lastText, Err: err})
			return err
		}
	}
}

// ToolSpec converts a tool set entry into the form offered to a model.
func ToolSpec(e tool.Entry) llm.ToolSpec {
	desc := e.Info.Description
	if desc == "" {
		desc = e.Info.Title
	}
	schema := e.Info.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return llm.ToolSpec{Name: e.Name, Description: desc, InputSchema: schema}
}

// basePrompt is otter's own system prompt.
const basePrompt = `You are otter, an AI assistant working in the user's terminal.
You can call tools: otter's built-in web-data tools (scraping pages and APIs, analysing sites, exporting data) and the tools of the user's MCP servers, named mcp__<server>__<tool>.
Use a tool when it helps to answer; never invent a tool's result. When a tool fails, read its error, fix the arguments and try again, or explain the problem.
Answer concisely. Your answers are shown in a terminal and may use Markdown.`

// systemPrompt is otter's prompt, the person's instruction files, the
// servers' instructions, the skills' catalog and then s.SystemPrompt
// ([agent] system_prompt).
func (a *Agent) systemPrompt(s Settings) string {
	userPrompt := s.SystemPrompt
	var b strings.Builder
	b.WriteString(basePrompt)
	b.WriteString("\n\n")
	if a.opts.WorkDir != "" {
		fmt.Fprintf(&b, "Working directory: %s\n", a.opts.WorkDir)
	}
	now := a.promptTime()
	fmt.Fprintf(&b, "Today's date: %s (%s)\n", now.Format("2006-01-02"), now.Weekday())
	if a.opts.UserInstructions != nil {
		b.WriteString(a.opts.UserInstructions())
	}
	b.WriteString(a.serverInstructions())
	b.WriteString(a.toolSearchPrompt())
	if c := strings.TrimSpace(s.Skills); c != "" {
		b.WriteString("\n" + c + "\n")
	}
	if s := strings.TrimSpace(userPrompt); s != "" {
		b.WriteString("\n# Instructions from the user's configuration\n\n")
		b.WriteString(s)
		b.WriteString("\n")
	}
	return b.String()
}

// Denial returns the error, wrapping ErrDenied, of a stored tool result
// that resultForModel made of a call that was not allowed to run, and nil
// for any other result, so that a resumed conversation shows the call as
// denied, as it was shown live, rather than as a tool that failed. The
// error's text is the result's, as it was live. A result saved before
// results carried Denied is known by its text, which starts with
// ErrDenied's (a PreToolUse hook's denial included).
func Denial(r llm.ToolResult) error {
	if !r.IsError || !r.Denied && !strings.HasPrefix(r.Text, ErrDenied.Error()) {
		return nil
	}
	return deniedError(r.Text)
}

// deniedError is a stored denial: its text, wrapping ErrDenied.
type deniedError string

func (e deniedError) Error() string { return string(e) }
func (e deniedError) Unwrap() error { return ErrDenied }

// resultForModel turns a tool call's outcome into what the model sees.
func (a *Agent) resultForModel(call llm.ToolCall, res *tool.Result, err error) llm.ToolResult {
	out := llm.ToolResult{CallID: call.ID, Name: call.Name}
	if err != nil {
		out.IsError = true
		out.Text = err.Error()
		out.Denied = errors.Is(err, ErrDenied)
		return out
	}
	if a.opts.Tools != nil {
		out.Text = a.opts.Tools.TextForModel(res)
	} else {
		out.Text = render.Model(res)
	}
	out.IsError = res.IsError
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok {
			out.Images = append(out.Images, llm.Image{MIMEType: img.MIMEType, Data: img.Data})
		}
	}
	return out
}
