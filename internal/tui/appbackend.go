package tui

// AppBackend: the Backend over internal/app and the agent it builds, which
// cmd/otter hands to Run.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/tool"
)

// AppOptions configures the core under the TUI: base (the paths, the
// global flags) with the UI answering the core's questions and showing
// its events. Logins are not Interactive: at startup a server that needs
// one goes needs-auth and the TUI says so in one notice; the person starts
// each login from /mcp (l). Asking at once would put a login prompt per
// server in front of the person before they typed anything (issue 3: no
// browser storm at startup).
func AppOptions(base app.Options, ui *UI) app.Options {
	base.Asker = ui
	base.SamplingApprover = ui
	base.OnEvent = func(ev app.ServerEvent) { ui.Notify(ev) }
	base.Interactive = false
	return base
}

// NewAppBackend returns the Backend over a (built with AppOptions) and
// the conversation it holds for ui, continuing the saved conversation o
// asks for. A session that cannot be found is an error.
func NewAppBackend(ctx context.Context, ui *UI, a *app.App, logger *slog.Logger, o app.SessionOptions) (*AppBackend, error) {
	b := &AppBackend{ui: ui, app: a, logger: logger}
	conv, err := a.NewConversation(ctx, app.ConversationOptions{
		Approver:        ui,
		Session:         o,
		ServerWait:      app.DefaultServerWait,
		FollowResources: true,
		OnSaveError:     func(err error) { ui.send(noticeMsg{itemError, err.Error()}) },
		AllowOutside:    b.allowOutside,
	})
	if err != nil {
		return nil, err
	}
	b.conv = conv
	b.keepWarnings()
	return b, nil
}

// keepWarnings copies the loaded config's warnings for ConfigWarnings,
// which must not wait for a reload in progress. Call it where no reload
// runs at the same time: in NewAppBackend, or holding reloadMu.
func (b *AppBackend) keepWarnings() {
	var ws []string
	for _, w := range b.app.Config().Warnings {
		ws = append(ws, w.Error())
	}
	for _, p := range b.app.Extensions().Problems {
		ws = append(ws, p.Error())
	}
	// Instruction files left out: a project's AGENTS.md that links out of
	// the project, a named pipe called AGENTS.md.
	for _, err := range b.app.Instructions().Errors {
		ws = append(ws, err.Error())
	}
	b.mu.Lock()
	b.warnings = ws
	b.mu.Unlock()
}

func (b *AppBackend) ConfigWarnings() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.warnings)
}

// WatchConfig reloads when a config file changes and auto_reload is on —
// in the config that was loaded, or in the one on disk now (turned on while
// otter runs) — and tells the person, until ctx is done.
func (b *AppBackend) WatchConfig(ctx context.Context) {
	b.app.WatchConfig(ctx, func(ctx context.Context) {
		b.reloadMu.Lock()
		on := b.app.Config().MCP.AutoReload
		b.reloadMu.Unlock()
		if !on && !b.app.AutoReloadOn() {
			return
		}
		diff, err := b.Reload(ctx)
		b.ui.Notify(Reloaded{Diff: diff, Err: err, Auto: true})
	})
}

// AppBackend implements Backend over an App and the Conversation it
// holds: keys become calls on the conversation, its events become the
// transcript.
type AppBackend struct {
	ui     *UI
	app    *app.App
	conv   *app.Conversation
	logger *slog.Logger

	reloadMu sync.Mutex // serialises reloads (the /mcp reload command and the watcher)

	mu       sync.Mutex
	warnings []string // ConfigWarnings
	// outsideAsked are the @paths outside the project the person was told
	// of once (allowOutside).
	outsideAsked map[string]bool
}

func (b *AppBackend) Provider() Provider {
	p, model, err := b.app.Provider()
	if err != nil {
		return Provider{Help: err.Error()}
	}
	return Provider{Name: p.Name(), Model: model}
}

func (b *AppBackend) Servers() []app.ServerStatus { return b.app.Servers() }
func (b *AppBackend) Tools() []tool.Entry         { return b.app.ToolEntries() }
func (b *AppBackend) ToolOffer() agent.ToolOffer  { return b.conv.ToolOffer() }
func (b *AppBackend) Prompts() []app.Prompt       { return b.app.Prompts() }
func (b *AppBackend) Login(ctx context.Context, server string) error {
	return b.app.Login(ctx, server)
}

func (b *AppBackend) GetPrompt(ctx context.Context, server, name string, args map[string]string) (*sdk.GetPromptResult, error) {
	return b.app.GetPrompt(ctx, server, name, args)
}

func (b *AppBackend) ToolChanges(server string) ([]app.ToolChange, error) {
	return b.app.ToolChanges(server)
}

func (b *AppBackend) ApproveTools(ctx context.Context, server string) error {
	_, err := b.app.ApproveTools(ctx, server, nil)
	return err
}

func (b *AppBackend) Reconnect(ctx context.Context, server string) error {
	return b.app.Reconnect(ctx, server)
}

func (b *AppBackend) SetEnabled(ctx context.Context, server string, on bool) error {
	return b.app.SetEnabled(ctx, server, on)
}

func (b *AppBackend) CallTool(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
	return b.app.CallTool(ctx, name, args)
}

func (b *AppBackend) Send(ctx context.Context, text string, emit func(agent.Event)) error {
	return b.shown(emit, func(emit func(agent.Event)) error { return b.conv.Send(ctx, text, emit) })
}

// A ShownSender is a Backend that keeps how a message was shown (its long
// pastes as placeholders) with the saved conversation, so that resuming it
// shows the message so.
type ShownSender interface {
	SendShown(ctx context.Context, text, short string, emit func(agent.Event)) error
}

// SendShown implements ShownSender.
func (b *AppBackend) SendShown(ctx context.Context, text, short string, emit func(agent.Event)) error {
	return b.shown(emit, func(emit func(agent.Event)) error { return b.conv.SendShown(ctx, text, short, emit) })
}

// SendNow implements ServerWaiter.
func (b *AppBackend) SendNow() bool { return b.conv.SendNow() }

// shown runs one turn, reporting its events through emit. A failure the
// transcript already shows (from TurnFinished.Err) is only logged.
func (b *AppBackend) shown(emit func(agent.Event), run func(func(agent.Event)) error) error {
	finished := false
	err := run(func(ev agent.Event) {
		if _, ok := ev.(agent.TurnFinished); ok {
			finished = true
		}
		emit(ev)
	})
	if err != nil && finished && !errors.Is(err, context.Canceled) {
		b.logger.Info("turn failed", "err", err)
		return nil
	}
	return err
}

func (b *AppBackend) Reload(ctx context.Context) (app.ReloadDiff, error) {
	b.reloadMu.Lock()
	defer b.reloadMu.Unlock()
	diff, err := b.app.Reload(ctx) // it hands the agent the new provider and settings
	if err == nil {
		b.keepWarnings()
	}
	return diff, err
}

// TrustPrompt asks about an untrusted project whose configuration would
// run or apply something, or send instruction files to the model, and
// about what was added to or changed in a trusted project's since (held
// back until trusted again): app.TrustReport says what.
func (b *AppBackend) TrustPrompt() *TrustRequest {
	r := b.app.TrustReport()
	if r.Empty() {
		return nil
	}
	req := &TrustRequest{Dir: r.Dir, Changed: r.Trusted, Legacy: r.Legacy, Instructions: r.Instructions, report: r}
	for _, it := range r.Items {
		if it.Kind == config.ItemServer {
			req.Servers = append(req.Servers, it.Name+": "+it.Detail+changeNote(it))
		} else {
			req.Settings = append(req.Settings, it.String()+changeNote(it))
		}
	}
	return req
}

// changeNote marks an item of a trusted project as new or changed.
func changeNote(it config.TrustItem) string {
	switch it.State {
	case config.ItemNew:
		return " (new)"
	case config.ItemChanged:
		return " (changed)"
	}
	return ""
}

// Trust approves what req (from TrustPrompt) listed and reloads; the open
// conversation runs the SessionStart hooks trusting enabled
// (app.Conversation.Trust).
func (b *AppBackend) Trust(ctx context.Context, req *TrustRequest) (app.ReloadDiff, error) {
	if req == nil {
		return app.ReloadDiff{}, nil
	}
	b.reloadMu.Lock()
	defer b.reloadMu.Unlock()
	diff, err := b.conv.Trust(ctx, req.report)
	if err == nil {
		b.keepWarnings()
	}
	return diff, err
}
