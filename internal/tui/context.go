package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
)

// This file is the TUI's view of the context window and the cost: the
// status bar's share of the window and cost, /compact, /cost (/usage) and
// /model.

// savedNotice shows an information notice and saves it with the
// conversation, so that resuming shows it where it stood (a change of
// model, say).
func (m *model) savedNotice(text string) {
	m.notice(itemInfo, text)
	m.conv.SaveNotice(text)
}

// ModelChoice is a model /model can switch to.
type ModelChoice struct {
	Provider string // the [providers.NAME] key
	Model    string
	// Listed: the provider's API listed it (else it is configured only).
	Listed bool
	// Window is the model's context window in tokens, 0 when nobody
	// said; InPrice and OutPrice are US dollars per million tokens, when
	// HasPrice.
	Window            int
	InPrice, OutPrice float64
	HasPrice          bool
}

// String is how /model names a choice: provider/model.
func (c ModelChoice) String() string { return c.Provider + "/" + c.Model }

// contextCommands are the slash commands of this file, for completion.
var contextCommands = []string{"/compact", "/cost", "/usage", "/model"}

// modelsMsg carries /model's list, or the error getting it.
type modelsMsg struct {
	choices []ModelChoice
	err     error
}

// contextCommand runs /compact, /cost, /usage and /model; ok is false for
// other commands.
func (m *model) contextCommand(cmd, rest string) (tea.Cmd, bool) {
	conv, ctx := m.conv, m.ctx
	switch cmd {
	case "/compact":
		if m.busy {
			m.notice(itemError, "otter is still working on a message: /compact when it is done (esc cancels it)")
			return nil, true
		}
		m.notice(itemInfo, "compacting the conversation…")
		// A turn like a message's: busy, the spinner, Esc cancels it, and
		// what is typed meanwhile is queued.
		return m.startTurn(func(ctx context.Context, emit func(app.Event)) error {
			if err := conv.Compact(ctx, rest, emit); err != nil && ctx.Err() == nil {
				return fmt.Errorf("could not compact the conversation: %w", err)
			}
			return ctx.Err()
		}), true
	case "/cost", "/usage":
		m.notice(itemInfo, costText(conv.Costs()))
		return nil, true
	case "/model":
		if rest != "" {
			return m.modelCommand(rest), true
		}
		m.notice(itemInfo, "asking the providers for their models…")
		return func() tea.Msg {
			c, err := modelChoices(ctx, conv.App())
			return modelsMsg{choices: c, err: err}
		}, true
	}
	return nil, false
}

// switchModel switches to "provider/model", or to "model" of the provider
// in use, and reports whether it did. When neither the configuration nor
// the built-in table knows the model's context window, the returned
// command asks the provider for it (windowMsg), so that what is said of
// the window is its figure, not the guess.
func (m *model) switchModel(name string) (tea.Cmd, bool) {
	provider, model, ok := strings.Cut(name, "/")
	if !ok || provider == "" {
		provider, model = m.provider.Name, name
	}
	if err := m.app.SetModel(provider, model); err != nil {
		// provider/model where the model's own name has a slash
		// (OpenRouter's vendor/model) is tried as a model of the current
		// provider.
		if ok && m.app.SetModel(m.provider.Name, name) == nil {
			provider, model = m.provider.Name, name
		} else {
			m.notice(itemError, err.Error())
			return nil, false
		}
	}
	m.refresh()
	m.ctxLine = m.contextStatus()
	st := m.conv.Context()
	if st.WindowKnown {
		m.savedNotice(fmt.Sprintf("the next message goes to %s/%s (context window %s tokens); the conversation continues", provider, model, app.TokenCount(int64(st.Window))))
		return nil, true
	}
	m.savedNotice(fmt.Sprintf("the next message goes to %s/%s; the conversation continues; asking the provider for the model's context window…", provider, model))
	conv, ctx := m.conv, m.ctx
	return func() tea.Msg {
		conv.LearnWindow(ctx)
		return windowMsg{provider: provider, model: model}
	}, true
}

// windowMsg says that the provider was asked the context window of a
// model /model chose.
type windowMsg struct{ provider, model string }

// windowText is what /model says of the window of the model it chose,
// once the provider was asked.
func windowText(msg windowMsg, st agent.ContextState) string {
	name := msg.provider + "/" + msg.model
	if st.WindowKnown {
		return fmt.Sprintf("context window of %s: %s tokens", name, app.TokenCount(int64(st.Window)))
	}
	return fmt.Sprintf("the provider does not say the context window of %s: otter assumes %s tokens (the status bar's ?); "+
		"set context_window in [providers.%s] if it takes more", name, app.TokenCount(int64(st.Window)), msg.provider)
}

// contextMsg handles the messages of this file.
func (m *model) contextMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case windowMsg:
		st := m.conv.Context()
		if st.Provider != msg.provider || st.Model != msg.model {
			return nil, true // switched again meanwhile
		}
		m.ctxLine = m.contextStatus()
		m.notice(itemInfo, windowText(msg, st))
		return nil, true
	case modelsMsg:
		if len(msg.choices) > 0 && m.panel == nil && len(m.questions) == 0 {
			m.panel = newModelPicker(m, msg.choices, msg.err)
			return nil, true
		}
		m.notice(itemInfo, modelsText(msg.choices, msg.err, m.provider, m.conv.Context(), thinkingOf(m.app)))
		return nil, true
	}
	return nil, false
}

// contextEvent shows the agent's events about the window.
func (m *model) contextEvent(ev agent.Event) bool {
	switch ev := ev.(type) {
	case agent.Usage, agent.TurnFinished:
		m.ctxLine = m.contextStatus()
		return false
	case agent.Compacted:
		m.ctxLine = m.contextStatus()
		m.notice(itemInfo, app.CompactedText(ev))
	case agent.NothingToGain:
		m.notice(itemInfo, app.NothingToGainText(ev))
	case agent.ContextNotice:
		m.notice(itemInfo, ev.Text)
	default:
		return false
	}
	return true
}

// tooLongHint is what the person can do in the TUI about a request too
// long for the model's window, besides what the error says.
func tooLongHint(err error) string {
	e, ok := errors.AsType[*agent.TooLongError](err)
	if !ok {
		return ""
	}
	var can []string
	if e.NewConversationHelps() {
		can = append(can, "/clear starts a new conversation")
	}
	can = append(can, "/model switches to a model with a larger window")
	return "\n" + strings.Join(can, "; ")
}

// costText is /cost: tokens and cost per model.
func costText(costs []agent.ModelUsage) string {
	if len(costs) == 0 {
		return "no model calls yet in this session"
	}
	var b strings.Builder
	b.WriteString("tokens and cost in this session\n")
	total, priced := 0.0, true
	for _, c := range costs {
		u := c.Usage
		cost := "no price known: set [pricing.\"" + c.Model + "\"]"
		if c.Priced {
			cost = fmt.Sprintf("$%.4f", c.Cost)
		}
		if c.Unreported == c.Calls {
			fmt.Fprintf(&b, "  %s/%s: %s · the provider reported no token counts\n", c.Provider, c.Model, countOf(c.Calls, "call"))
			total += c.Cost
			continue
		}
		unreported := ""
		if c.Unreported > 0 {
			unreported = fmt.Sprintf(" (%d without token counts)", c.Unreported)
		}
		// Reasoning (thinking) tokens are part of the output, billed as
		// output: said only when there were any, as a share of it.
		reasoning := ""
		if u.ReasoningTokens > 0 {
			reasoning = " (reasoning " + app.TokenCount(u.ReasoningTokens) + ")"
		}
		fmt.Fprintf(&b, "  %s/%s: %s%s · input %s (cached %s, written to cache %s) · output %s%s · %s\n",
			c.Provider, c.Model, countOf(c.Calls, "call"), unreported, app.TokenCount(u.InputTokens), app.TokenCount(u.CachedTokens), app.TokenCount(u.CacheWriteTokens), app.TokenCount(u.OutputTokens), reasoning, cost)
		total += c.Cost
		priced = priced && c.Priced
	}
	if len(costs) > 1 || !priced {
		fmt.Fprintf(&b, "  total: $%.4f", total)
		if !priced {
			b.WriteString(" (models without a price not counted)")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// contextStatus is the status bar's share of the window and cost, e.g.
// "31% of 200k · $0.0123"; "" before anything is known. A share over 100%
// is shown as it is, not capped: a message longer than the window puts
// the conversation over it, and by how much says how much to cut.
func (m *model) contextStatus() string {
	if m.provider.Help != "" {
		return ""
	}
	st := m.conv.Context()
	if st.Window <= 0 {
		return ""
	}
	s := fmt.Sprintf("%d%% of %s", int(st.Share()*100+0.5), app.TokenCount(int64(st.Window)))
	if !st.WindowKnown {
		s += "?"
	}
	var cost float64
	priced := false
	for _, c := range m.conv.Costs() {
		if c.Priced {
			cost += c.Cost
			priced = true
		}
	}
	if priced {
		s += fmt.Sprintf(" · $%.4f", cost)
	}
	return s + " "
}
