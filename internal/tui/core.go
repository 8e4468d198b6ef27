package tui

// How the TUI stands on the core: the App (built with AppOptions) and the
// Conversation it holds (NewConversation), which the model calls directly,
// as otter -p does. What is here is the TUI's part only: its answers to the
// core's questions and its view of the core's state.

import (
	"context"
	"fmt"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/llm"
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
	base.Lazy = true // a server starts when it is needed (see app.Options.Lazy)
	return base
}

// NewConversation opens the conversation the TUI shows on a (built with
// AppOptions), continuing the saved one o asks for. A session that cannot
// be found is an error.
func NewConversation(ctx context.Context, ui *UI, a *app.App, o app.SessionOptions) (*app.Conversation, error) {
	return a.NewConversation(ctx, app.ConversationOptions{
		Approver:        ui,
		Session:         o,
		ServerWait:      app.DefaultServerWait,
		FollowResources: true,
		OnSaveError:     func(err error) { ui.send(noticeMsg{itemError, err.Error()}) },
		AllowOutside:    ui.allowOutside,
	})
}

// WatchConfig reloads when a config file changes and auto_reload is on
// (app.App.WatchConfig) and tells the person, until ctx is done.
func (u *UI) WatchConfig(ctx context.Context, a *app.App) {
	a.WatchConfig(ctx, func(diff app.ReloadDiff, err error) {
		u.Notify(Reloaded{Diff: diff, Err: err, Auto: true})
	})
}

// allowOutside is the TUI's answer for an @path outside the project (the
// git root, else the directory with .otter/, else the working directory):
// the message fails once, saying so; sent again, the file is attached.
func (u *UI) allowOutside(_ context.Context, path string) (bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.outsideAsked[path] {
		return true, nil
	}
	if u.outsideAsked == nil {
		u.outsideAsked = map[string]bool{}
	}
	u.outsideAsked[path] = true
	return false, nil
}

// providerOf is the model provider a's next message goes to, or how to
// configure one.
func providerOf(a *app.App) Provider {
	p, model, err := a.Provider()
	if err != nil {
		return Provider{Help: err.Error()}
	}
	return Provider{Name: p.Name(), Model: model}
}

// trustRequest is what to ask about an untrusted project whose
// configuration would run or apply something, or send instruction files to
// the model, and about what was added to or changed in a trusted
// project's since (held back until trusted again) — app.TrustReport says
// what; nil when there is nothing to ask.
func trustRequest(a *app.App) *TrustRequest {
	r := a.TrustReport()
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

// modelChoices are the models /model offers: those of the configured
// providers (the provider's own list where it has one), with what is known
// of each.
func modelChoices(ctx context.Context, a *app.App) ([]ModelChoice, error) {
	list, err := a.Models(ctx)
	out := make([]ModelChoice, len(list))
	for i, c := range list {
		f := a.Facts(c.Provider, c.Model)
		out[i] = ModelChoice{Provider: c.Provider, Model: c.Model, Listed: c.Listed, HasPrice: f.HasPrice,
			InPrice: f.Price.Input, OutPrice: f.Price.Output}
		if f.WindowKnown {
			out[i].Window = f.ContextWindow
		}
	}
	return out, err
}

// thinkingOf is a's reasoning level as the config writes it: off, low,
// medium, high, or a budget in tokens.
func thinkingOf(a *app.App) string {
	t := a.Thinking()
	switch {
	case t.Budget > 0:
		return fmt.Sprintf("%d-token thinking budget", t.Budget)
	case t.On():
		return t.Effort
	}
	return llm.ThinkingOff
}

// setThinking sets a's reasoning level for the next message from what
// /model typed.
func setThinking(a *app.App, level string) error {
	t, err := llm.ParseThinking(level)
	if err != nil {
		return fmt.Errorf("could not set the reasoning level: %w", err)
	}
	a.SetThinking(t)
	return nil
}
