package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/attach"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/hooks"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/localtools"
	"github.com/otter-sh/otter/internal/record"
	"github.com/otter-sh/otter/internal/servers"
)

// DefaultServerWait is how long a front end's first message waits for
// servers still starting (ConversationOptions.ServerWait), unless a
// server's own startup_timeout is shorter.
const DefaultServerWait = 30 * time.Second

// ErrNotSent is wrapped by an error of Send when the message never reached
// the model (an @-mention's resource could not be read, a hook refused
// it): the front end gives the text back to fix.
var ErrNotSent = errors.New("the message was not sent")

// ConversationOptions are what a front end chooses for a Conversation.
type ConversationOptions struct {
	// Approver answers tool permission prompts; nil denies every call that
	// would need to ask.
	Approver ask.Approver
	// MaxTurns overrides [agent].max_turns when positive.
	MaxTurns int
	// Session says which saved conversation to continue, if any.
	Session SessionOptions
	// ServerWait bounds how long the first message waits for MCP servers
	// still starting (each server's startup_timeout bounds it too), so that
	// the model is offered their tools; 0 sends at once. A message sent
	// before the servers settle would go without their tools, and the
	// model would answer without them — a wrong answer nobody can tell
	// from a right one. SendNow ends the wait early.
	ServerWait time.Duration
	// FollowResources subscribes to the resources a message attaches, on
	// the servers that support it, so that their changes are reported
	// (servers.ResourceUpdated through Options.OnEvent). A one-shot run has
	// no use for it.
	FollowResources bool
	// OnSaveError hears of a session write that fails after the start
	// (the conversation goes on unsaved); it may be called from any
	// goroutine.
	OnSaveError func(error)
	// Hooks contribute to each outgoing message, after @-mentions are
	// expanded, in order (see Outgoing).
	Hooks []OutgoingHook
	// AllowOutside decides whether an @path outside the project (the git
	// root, else the project directory, else the working directory) is
	// attached; nil refuses every one. A front end asks the person, or
	// answers what a flag said.
	AllowOutside func(ctx context.Context, path string) (bool, error)
}

// Outgoing is a typed message on its way to the model. The Conversation
// expands its @SERVER:URI mentions first; then each OutgoingHook may add
// context (Text), images and chips, or refuse the message.
type Outgoing struct {
	// Typed is the message as the person typed it; hooks do not change it.
	Typed string
	// Text is what the model gets: the typed text and what was attached
	// after it. A hook appends blocks, separated by a blank line.
	Text string
	// Images go with the message.
	Images []llm.Image
	// Attached are short descriptions of what was added ("@docs:readme
	// (text, 1.2 kB)"), each shown as a chip by the front end.
	Attached []string
}

// OutgoingHook contributes to an outgoing message. An error refuses the
// message: Send returns it wrapping ErrNotSent, and nothing reaches the
// model or the session.
type OutgoingHook func(ctx context.Context, out *Outgoing) error

// Conversation is one running conversation, the same for every front end:
// the agent, the saved session it writes to, what happens to a typed
// message before it goes out (mentions, hooks, the first message's wait
// for servers), the events of each turn, and the new/clear/fork/resume
// lifecycle with the notes that describe it. A front end turns keys or
// flags into calls on it and its events into pixels or lines.
//
// One turn runs at a time (a second Send while one runs fails with
// agent.ErrBusy); lifecycle calls are for when no turn runs.
type Conversation struct {
	app   *App
	agent *agent.Agent
	opts  ConversationOptions

	mu      sync.Mutex
	emit    func(agent.Event) // the running turn's
	session *Session
	notes   []string // Notes: the latest start's
	settled bool     // the first message's wait for servers is over
	// pendingContext is what SessionStart hooks printed, for the next
	// message.
	pendingContext []string
	// startSource is how the session last started ("startup", "resume",
	// "clear"): trusting the project runs the SessionStart hooks it
	// enabled as that start would have.
	startSource string
	sendNow     chan struct{} // closed by SendNow while the first message waits
	shell       []string      // the ! lines run since the last message, for the model
	// prompt is the person's message on its way to the model, until the
	// agent saves it (shown.go).
	prompt *pendingPrompt
	// queue are messages the person typed while a turn ran (queue.go).
	queue []string
	// local is what the tools for the project keep of this conversation:
	// what the model read, the files changed, background commands. Its
	// Checkpointer (localtools.State.SetCheckpointer) is where undo keeps
	// a file before a tool changes it.
	local *localtools.State
}

// NewConversation builds the conversation's agent and gives it the session
// o.Session asks for: a new one (saved from its first message), or the
// saved one it continues. A session that cannot be found is an error
// (wrapping record.ErrNotFound or record.ErrAmbiguous), so a front end
// can refuse it before servers start.
func (a *App) NewConversation(ctx context.Context, o ConversationOptions) (*Conversation, error) {
	c := &Conversation{app: a, opts: o, local: a.local.NewState()}
	c.local.SetCheckpointer(checkpoints{c}) // undo.go
	approver := o.Approver
	if approver != nil {
		approver = notifyingApprover{Approver: approver, c: c}
	}
	c.agent = a.NewAgent(AgentOptions{Approver: approver, OnEvent: c.onAgentEvent, MaxTurns: o.MaxTurns, Hooks: c.runHooks})
	if approver != nil {
		// A command the sandbox refused may run once outside it if the
		// person says so (a headless policy refuses: ask.Permission's
		// Unconfined).
		c.local.SetUnconfinedAsker(approver.ApproveTool)
	}
	if err := c.start(ctx, o.Session); err != nil {
		return nil, err
	}
	source := "startup"
	if o.Session.Resume != "" || o.Session.Continue {
		source = "resume"
	}
	c.sessionStart(ctx, source)
	return c, nil
}

// start attaches the agent to the session o asks for and words the notes.
func (c *Conversation) start(ctx context.Context, o SessionOptions) error {
	s, err := c.app.startSession(ctx, c.agent, o, c.saveError)
	if err != nil {
		return err
	}
	if !o.Fork {
		// Another conversation: what this one's model read does not count.
		c.local.Forget()
	}
	if s.Recorder != nil {
		c.agent.SetRecorder(shownRecorder{Recorder: s.Recorder, c: c})
	}
	notes := s.notes(c.app.WorkDir, o.Fork)
	c.mu.Lock()
	c.session, c.notes = s, notes
	c.mu.Unlock()
	return nil
}

func (c *Conversation) saveError(err error) {
	c.app.Logger.Warn("session", "err", err)
	if c.opts.OnSaveError != nil {
		c.opts.OnSaveError(err)
	}
}

// notes word what a start of s means for the person: why nothing is
// saved, which conversation continues (or was forked), or that the latest
// one was cleared. They name no front end's commands; a front end may add
// its hints.
func (s *Session) notes(dir string, forked bool) []string {
	var out []string
	if s.Warning != nil {
		out = append(out, s.Warning.Error())
	}
	if s.Fresh {
		out = append(out, fmt.Sprintf("No saved conversation in %s to continue, so this is a new one.", dir))
	}
	if c := s.Cleared; c.ID != "" {
		out = append(out, fmt.Sprintf("The latest conversation here, %s (%s), was cleared, so this is a new one.", short(c.ID), titleOf(c)))
	}
	r := s.Resumed
	if r.ID == "" {
		return out
	}
	if forked {
		return append(out, fmt.Sprintf("forked: you now continue %s (%s, %d messages), a copy of %s, which stays as it was.",
			short(r.ID), titleOf(r), r.Messages, short(r.ParentID)))
	}
	copyOf := ""
	if r.ParentID != "" {
		copyOf = ", a copy of " + short(r.ParentID)
	}
	out = append(out, fmt.Sprintf("Continuing session %s (%s%s, %d messages, last %s).",
		short(r.ID), titleOf(r), copyOf, r.Messages, r.Updated.Format("2006-01-02 15:04")))
	if s.ModelNote != "" {
		out = append(out, s.ModelNote)
	}
	return out
}

// short is the 8-character form of a session ID people read and type.
func short(id string) string { return id[:min(8, len(id))] }

func titleOf(i record.Info) string {
	if i.Title == "" {
		return "untitled"
	}
	return i.Title
}

// Notes are what the front end shows about the session when the
// conversation starts or after Resume, Fork or New: why nothing is saved,
// which conversation continues. Empty for a new, saved conversation.
func (c *Conversation) Notes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.notes)
}

// Warning is why nothing of the conversation is saved (the session
// database cannot be used), or nil; Notes word it too. A front end may add
// how to recover (errors.Is record.ErrCorrupt).
func (c *Conversation) Warning() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session.Warning
}

// Resumed is the session the conversation continues (zero for a new one)
// and its stored rows, for a front end to show the conversation as it was.
func (c *Conversation) Resumed() (record.Info, []record.Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session.Resumed, c.session.Entries
}

// SessionID is the saved session's ID; "" while a new conversation has no
// message yet or nothing is saved.
func (c *Conversation) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session.ID()
}

// SaveNotice saves a line the front end showed in the transcript (a
// compaction's notice, say) where it stands in the conversation, so that
// resuming it shows the line again; the model is never sent it. It is
// called from the turn's emit, before the agent goes on, so that the line
// keeps its place among the messages. Nothing is saved before the
// conversation's first message. The Conversation saves the notices of
// its own events itself (hooks, notes, attachments, a failed turn).
func (c *Conversation) SaveNotice(text string) {
	c.saveNotice(record.NoticeInfo, text)
}

// onAgentEvent hands the agent's events to the running turn's emit.
func (c *Conversation) onAgentEvent(ev agent.Event) {
	c.mu.Lock()
	emit := c.emit
	c.mu.Unlock()
	if emit != nil {
		emit(ev)
	}
}

// emitTo sends the agent's events to emit until the returned func is
// called (the end of a turn).
func (c *Conversation) emitTo(emit func(agent.Event)) (done func()) {
	c.mu.Lock()
	c.emit = c.savingNotices(emit)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.emit = nil
		c.mu.Unlock()
	}
}

// currentEmit is the running turn's emit (never nil within a turn).
func (c *Conversation) currentEmit() func(agent.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.emit
}

// Send sends a typed message: its @SERVER:URI mentions are read and
// attached (one Attached chip event for all), each hook contributes,
// and, for the first message, servers still starting are waited for. It
// blocks until the turn is over, reporting the agent's events through emit
// in order; cancelling ctx stops the turn. An error wrapping ErrNotSent
// means nothing reached the model: one wrapping *UntrustedCommandError is a
// /NAME of the project that is off until the user trusts it.
func (c *Conversation) Send(ctx context.Context, text string, emit func(agent.Event)) error {
	return c.SendShown(ctx, text, "", emit)
}

// SendShown is Send for a message the front end shows as short (its long
// pastes as placeholders; "" shows text): the session keeps how it was
// shown, as it keeps what was typed, so that resuming shows it alike.
func (c *Conversation) SendShown(ctx context.Context, text, short string, emit func(agent.Event)) error {
	if err := c.app.CheckCommand(text); err != nil {
		// A command of the untrusted project: refused, not sent as text.
		return fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	return c.turn(ctx, emit, func(ctx context.Context) ([]llm.Message, error) {
		c.beginPrompt()
		emit := c.currentEmit()
		out := &Outgoing{Typed: text, Text: text}
		if exp, cmd, notes, ok, err := c.expandUserCommand(ctx, text); ok {
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrNotSent, err)
			}
			if cmd != nil {
				c.agent.SetNextTurn(agent.TurnOptions{Model: cmd.Model, Allow: cmd.ToolAllowed})
			}
			for _, n := range notes {
				emit(Note{Text: n})
			}
			out.Text = exp
		}
		if err := c.expandMentions(ctx, out); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotSent, err) // attach's errors are sentences of their own
		}
		if err := c.userPromptSubmit(ctx, out); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotSent, err)
		}
		for _, h := range c.opts.Hooks {
			if err := h(ctx, out); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrNotSent, err)
			}
		}
		out.Text += c.takeShellContext()
		shown := record.Shown{Short: short}
		if short == text {
			shown.Short = ""
		}
		if out.Text != text {
			shown.Typed = text
		}
		c.setShown(shown)
		chips(out.Attached, emit)
		return []llm.Message{{Role: llm.RoleUser, Text: out.Text, Images: out.Images}}, nil
	})
}

// SendPrompt sends the messages of a server's prompt whole
// (attach.PromptMessages); its embedded resources get a chip each.
func (c *Conversation) SendPrompt(ctx context.Context, server string, res *sdk.GetPromptResult, emit func(agent.Event)) error {
	return c.turn(ctx, emit, func(context.Context) ([]llm.Message, error) {
		c.beginPrompt()
		emit := c.currentEmit()
		msgs, atts := attach.PromptMessages(c.app.tools, server, res)
		if len(msgs) == 0 {
			return nil, fmt.Errorf("%w: the prompt from MCP server %q has no messages", ErrNotSent, server)
		}
		chips(describe(atts), emit)
		return msgs, nil
	})
}

// Compact compacts the conversation now, keeping in particular what keep
// names, reporting agent.Compacted through emit. Cancelling ctx stops it.
func (c *Conversation) Compact(ctx context.Context, keep string, emit func(agent.Event)) error {
	defer c.emitTo(emit)()
	hookMessages(hooks.PreCompact, c.runHooks(ctx, hooks.PreCompact, hooks.Input{Trigger: "manual", CustomInstructions: keep}), emit)
	return c.agent.Compact(ctx, keep)
}

// turn runs one turn on the messages build returns.
func (c *Conversation) turn(ctx context.Context, emit func(agent.Event), build func(context.Context) ([]llm.Message, error)) error {
	if emit == nil {
		emit = func(agent.Event) {}
	}
	finished := false
	shown := emit
	emit = func(ev agent.Event) {
		if _, ok := ev.(agent.TurnFinished); ok {
			finished = true // the events are serialised: no race with the check below
		}
		shown(ev)
	}
	defer c.emitTo(emit)()
	defer c.endPrompt() // a message that was not sent leaves nothing to save
	if err := c.waitForServers(ctx, emit); err != nil {
		return err
	}
	msgs, err := build(ctx)
	if err != nil {
		return err
	}
	err = c.agent.SendMessages(localtools.WithState(ctx, c.local), msgs...)
	if err != nil && finished && !errors.Is(err, context.Canceled) {
		c.app.Logger.Info("turn failed", "err", err)
		return reportedError{err}
	}
	return err
}

// waitForServers is the first message's wait for servers still starting
// (see ConversationOptions.ServerWait). It says whom it waits for
// (WaitingForServers) and when it is over (ServersReady). An
// error is ctx's: the person gave up while servers were starting.
func (c *Conversation) waitForServers(ctx context.Context, emit func(agent.Event)) error {
	c.mu.Lock()
	if c.settled {
		c.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	c.sendNow = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.sendNow = nil
		c.mu.Unlock()
	}()
	statuses := c.app.mcp.Statuses()
	if len(statuses) == 0 {
		c.setSettled()
		return nil
	}
	if pending := c.pending(statuses); len(pending) > 0 && c.opts.ServerWait > 0 {
		emit(WaitingForServers{Servers: pending})
		wctx, cancel := context.WithTimeout(ctx, c.opts.ServerWait)
		go func() {
			select {
			case <-ch:
				cancel()
			case <-wctx.Done():
			}
		}()
		_ = c.app.mcp.WaitSettled(wctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w: stopped while the MCP servers were starting: %w", ErrNotSent, err)
		}
	}
	c.setSettled()
	emit(ServersReady{})
	return nil
}

func (c *Conversation) setSettled() {
	c.mu.Lock()
	c.settled = true
	c.mu.Unlock()
}

// pending are the servers still starting, each with the longest the wait
// may take for it.
func (c *Conversation) pending(statuses []servers.Status) []PendingServer {
	var out []PendingServer
	for _, st := range statuses {
		if st.State != servers.StatePending {
			continue
		}
		limit := config.DefaultStartupTimeout
		if s, ok := c.app.cfg.Server(st.Name); ok && s.StartupTimeout.Duration > 0 {
			limit = s.StartupTimeout.Duration
		}
		out = append(out, PendingServer{Name: st.Name, Within: min(limit, c.opts.ServerWait)})
	}
	return out
}

// SendNow ends the first message's wait for servers: it goes out with the
// tools of the servers connected so far. It reports whether a wait was
// running.
func (c *Conversation) SendNow() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sendNow == nil {
		return false
	}
	close(c.sendNow)
	c.sendNow = nil
	return true
}

// expandMentions attaches the files out's @paths name and the resources
// its @SERVER:URI mentions name (attach.Expander) and, with
// FollowResources, subscribes to the resources.
func (c *Conversation) expandMentions(ctx context.Context, out *Outgoing) error {
	files := &attach.FileOptions{
		WorkDir:      c.app.WorkDir,
		Root:         cmp.Or(c.app.ProjectRoot(), c.app.WorkDir),
		AllowOutside: c.opts.AllowOutside,
	}
	ex, err := attach.Expander{Source: c.app.mcp, Set: c.app.tools, Files: files}.Expand(ctx, out.Text)
	if err != nil {
		return err
	}
	out.Text = ex.Text
	out.Images = append(out.Images, ex.Images...)
	out.Attached = append(out.Attached, describe(ex.Attachments)...)
	if c.opts.FollowResources {
		c.subscribe(ctx, ex.Attachments)
	}
	return nil
}

// subscribe asks the servers that support resources/subscribe to report
// changes of the attached resources. A failure costs only the report, so
// it is logged.
func (c *Conversation) subscribe(ctx context.Context, atts []attach.Attachment) {
	for _, a := range atts {
		if a.Server == "" || !c.app.mcp.CanSubscribe(a.Server) { // a file
			continue
		}
		if err := c.app.mcp.Subscribe(ctx, a.Server, a.URI); err != nil {
			c.app.Logger.Warn("subscribing to an attached resource", "server", a.Server, "uri", a.URI, "err", err)
		}
	}
}

func describe(atts []attach.Attachment) []string {
	out := make([]string, len(atts))
	for i, a := range atts {
		out[i] = a.String()
	}
	return out
}

// chips reports attachments through emit, one chip each.
func chips(items []string, emit func(agent.Event)) {
	if len(items) > 0 {
		emit(Attached{Items: items})
	}
}

// FilesChanged lists the files the model's edit_file and write_file
// changed in this conversation (absolute, in the order first changed).
func (c *Conversation) FilesChanged() []string { return c.local.FilesChanged() }

// Context is the conversation's use of the model's context window.
func (c *Conversation) Context() agent.ContextState { return c.agent.Context() }

// LearnWindow asks the provider the context window of the model in use,
// when nobody else knows it (see agent.Agent.LearnWindow).
func (c *Conversation) LearnWindow(ctx context.Context) { c.agent.LearnWindow(ctx) }

// Costs are the tokens and cost of each model the conversation used.
func (c *Conversation) Costs() []agent.ModelUsage { return c.agent.Costs() }

// Messages are the conversation as the model is sent it.
func (c *Conversation) Messages() []llm.Message { return c.agent.Messages() }

// ToolOffer says which MCP tools the model is not offered until it loads
// them.
func (c *Conversation) ToolOffer() agent.ToolOffer { return c.agent.ToolOffer() }

// Clear forgets the conversation. Once something of it is saved, a new
// saved conversation begins (as New), and the cleared one is marked so
// that continuing the latest conversation of the directory does not bring
// it back; resuming it by its ID still does.
func (c *Conversation) Clear(ctx context.Context) error {
	c.End(ctx, "clear")
	defer c.sessionStart(ctx, "clear")
	c.agent.Reset()
	id := c.SessionID()
	if id == "" {
		return nil
	}
	if store, err := c.app.Sessions(ctx); err == nil {
		if err := store.SetState(ctx, id, clearedState, true); err != nil {
			return fmt.Errorf("marking the cleared conversation: %w", err)
		}
	}
	return c.New(ctx)
}

// New begins a new conversation, saved as a new session from its first
// message; the last one stays saved as it was.
func (c *Conversation) New(ctx context.Context) error {
	if err := c.agent.Load(nil, nil); err != nil {
		return err
	}
	return c.start(ctx, SessionOptions{})
}

// Fork continues a copy of the current session, which stays as it was.
func (c *Conversation) Fork(ctx context.Context) (record.Info, error) {
	id := c.SessionID()
	if id == "" {
		return record.Info{}, errors.New("nothing of this conversation is saved yet, so there is nothing to fork")
	}
	if err := c.start(ctx, SessionOptions{Resume: id, Fork: true}); err != nil {
		return record.Info{}, err
	}
	info, _ := c.Resumed()
	return info, nil
}

// Resume continues the session with this ID or unique ID prefix.
func (c *Conversation) Resume(ctx context.Context, id string) (record.Info, []record.Entry, error) {
	if err := c.start(ctx, SessionOptions{Resume: id}); err != nil {
		return record.Info{}, nil, err
	}
	info, entries := c.Resumed()
	return info, entries, nil
}

// Rename sets the current session's title.
func (c *Conversation) Rename(ctx context.Context, title string) error {
	id := c.SessionID()
	if id == "" {
		return errors.New("nothing of this conversation is saved yet: send a message first")
	}
	s, err := c.app.Sessions(ctx)
	if err != nil {
		return err
	}
	return s.Rename(ctx, id, title)
}

// FindSessions lists saved sessions, the working directory's first: the
// latest without words, else those whose title or messages hold them,
// best match first, each with what matched.
func (c *Conversation) FindSessions(ctx context.Context, words string) ([]record.Found, error) {
	s, err := c.app.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	here := c.app.WorkDir
	var out []record.Found
	if strings.TrimSpace(words) == "" {
		mine, err := s.List(ctx, record.ListOptions{Cwd: here, Limit: 10})
		if err != nil {
			return nil, err
		}
		all, err := s.List(ctx, record.ListOptions{Limit: 20})
		if err != nil {
			return nil, err
		}
		for _, i := range append(mine, all...) {
			if len(out) < len(mine) || i.Cwd != here {
				out = append(out, record.Found{Info: i})
			}
		}
		return out, nil
	}
	if out, err = s.Find(ctx, words, 0); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(x, y record.Found) int {
		switch {
		case x.Cwd == here && y.Cwd != here:
			return -1
		case x.Cwd != here && y.Cwd == here:
			return 1
		}
		return 0
	})
	return out, nil
}

// ErrExportExists is wrapped by Export's error when the file is there
// already: a conversation never overwrites a file of the person's.
var ErrExportExists = errors.New("the file exists")

// Export writes the saved conversation as Markdown (prompts, answers, tool
// calls and results, notices, compactions) to path, which must not exist,
// and returns the file's absolute path. path "" writes
// otter-SESSIONPREFIX.md in the working directory. A relative path is
// taken from the working directory, and ~/ is the home directory.
func (c *Conversation) Export(ctx context.Context, path string) (string, error) {
	id := c.SessionID()
	if id == "" {
		return "", errors.New("nothing of this conversation is saved yet: send a message first")
	}
	s, err := c.app.Sessions(ctx)
	if err != nil {
		return "", err
	}
	info, err := s.Get(ctx, id)
	if err != nil {
		return "", err
	}
	entries, err := s.Entries(ctx, id, 0)
	if err != nil {
		return "", err
	}
	cs, err := s.Compactions(ctx, id)
	if err != nil {
		return "", err
	}
	if path == "" {
		path = "otter-" + id[:min(8, len(id))] + ".md"
	}
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, rest)
		}
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(c.app.WorkDir, path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("not exporting to %s: %w; name another file", path, ErrExportExists)
	}
	if err != nil {
		return "", fmt.Errorf("exporting the conversation: %w", err)
	}
	_, err = f.WriteString(record.Markdown(info, entries, cs))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf("exporting the conversation to %s: %w", path, err)
	}
	return path, nil
}
