package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/otter-sh/otter/internal/agent"
)

// This file is the TUI's view of the context window and the cost: the
// status bar's share of the window and cost, /compact, /cost (/usage) and
// /model.

// ContextBackend is the part of Backend about the model, its window and
// what the conversation costs.
type ContextBackend interface {
	// Context is the conversation's use of the model's context window.
	Context() agent.ContextState
	// Costs are the tokens and cost of each model used in this session.
	Costs() []agent.ModelUsage
	// Compact compacts the conversation now, keeping in particular what
	// keep names (/compact), reporting the agent's events (Compacted)
	// through emit. It is a turn of its own: ctx cancels it.
	Compact(ctx context.Context, keep string, emit func(agent.Event)) error
	// Models lists the models of the configured providers (the provider's
	// own list where it has one).
	Models(ctx context.Context) ([]ModelChoice, error)
	// SetModel switches the provider and model for the next message; the
	// conversation continues.
	SetModel(provider, model string) error
	// LearnWindow asks the provider the context window of the model in
	// use when nobody said it; it may take a few seconds.
	LearnWindow(ctx context.Context)
	// Thinking is the reasoning level in use: off, low, medium, high or a
	// token budget; SetThinking changes it for the next message.
	Thinking() string
	SetThinking(level string) error
}

// A NoticeSaver is a Backend that saves notices with the conversation, so
// that resuming it shows them where they stood (AppBackend: the session).
type NoticeSaver interface {
	SaveNotice(text string)
}

// savingNotices returns emit that first saves the notice of a compaction
// (or of one not made) with the conversation: an automatic one happens
// within a turn, unseen but for its notice, and a resumed conversation
// that dropped the notice would hide why the model forgot the details.
// (The notices of other events are the backend's to save, in their own
// words: app.Conversation saves them.) It runs on the turn's
// goroutine, before the agent goes on, so that the notice keeps its place
// among the saved messages.
func (m *model) savingNotices(emit func(agent.Event)) func(agent.Event) {
	saver, ok := m.b.(NoticeSaver)
	if !ok {
		return emit
	}
	return func(ev agent.Event) {
		switch ev := ev.(type) {
		case agent.Compacted:
			saver.SaveNotice(compactedText(ev))
		case agent.NothingToGain:
			saver.SaveNotice(nothingToGainText(ev))
		}
		emit(ev)
	}
}

// savedNotice shows an information notice and saves it with the
// conversation where the Backend is a NoticeSaver, so that resuming shows
// it where it stood (a change of model, say).
func (m *model) savedNotice(text string) {
	m.notice(itemInfo, text)
	if saver, ok := m.b.(NoticeSaver); ok {
		saver.SaveNotice(text)
	}
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
	b, ctx := m.b, m.ctx
	switch cmd {
	case "/compact":
		if m.busy {
			m.notice(itemError, "otter is still working on a message: /compact when it is done (esc cancels it)")
			return nil, true
		}
		m.notice(itemInfo, "compacting the conversation…")
		// A turn like a message's: busy, the spinner, Esc cancels it, and
		// what is typed meanwhile is queued.
		return m.startTurn(func(ctx context.Context, emit func(agent.Event)) error {
			if err := b.Compact(ctx, rest, emit); err != nil && ctx.Err() == nil {
				return fmt.Errorf("could not compact the conversation: %w", err)
			}
			return ctx.Err()
		}), true
	case "/cost", "/usage":
		m.notice(itemInfo, costText(b.Costs()))
		return nil, true
	case "/model":
		if rest != "" {
			return m.modelCommand(rest), true
		}
		m.notice(itemInfo, "asking the providers for their models…")
		return func() tea.Msg {
			c, err := b.Models(ctx)
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
	if err := m.b.SetModel(provider, model); err != nil {
		// provider/model where the model's own name has a slash
		// (OpenRouter's vendor/model) is tried as a model of the current
		// provider.
		if ok && m.b.SetModel(m.provider.Name, name) == nil {
			provider, model = m.provider.Name, name
		} else {
			m.notice(itemError, err.Error())
			return nil, false
		}
	}
	m.refresh()
	m.ctxLine = m.contextStatus()
	st := m.b.Context()
	if st.WindowKnown {
		m.savedNotice(fmt.Sprintf("the next message goes to %s/%s (context window %s tokens); the conversation continues", provider, model, humanCount(int64(st.Window))))
		return nil, true
	}
	m.savedNotice(fmt.Sprintf("the next message goes to %s/%s; the conversation continues; asking the provider for the model's context window…", provider, model))
	b, ctx := m.b, m.ctx
	return func() tea.Msg {
		b.LearnWindow(ctx)
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
		return fmt.Sprintf("context window of %s: %s tokens", name, humanCount(int64(st.Window)))
	}
	return fmt.Sprintf("the provider does not say the context window of %s: otter assumes %s tokens (the status bar's ?); "+
		"set context_window in [providers.%s] if it takes more", name, humanCount(int64(st.Window)), msg.provider)
}

// contextMsg handles the messages of this file.
func (m *model) contextMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case windowMsg:
		st := m.b.Context()
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
		m.notice(itemInfo, modelsText(msg.choices, msg.err, m.provider, m.b.Context(), m.b.Thinking()))
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
		m.notice(itemInfo, compactedText(ev))
	case agent.NothingToGain:
		m.notice(itemInfo, nothingToGainText(ev))
	case agent.ContextNotice:
		m.notice(itemInfo, ev.Text)
	default:
		return false
	}
	return true
}

func compactedText(ev agent.Compacted) string {
	why := map[string]string{"auto": "it neared the model's context window", "manual": "you asked", "overflow": "the provider refused it as too long"}[ev.Reason]
	var did []string
	if ev.Elided == 1 {
		did = append(did, "1 old tool result replaced by a one-line stub")
	} else if ev.Elided > 1 {
		did = append(did, fmt.Sprintf("%d old tool results replaced by one-line stubs", ev.Elided))
	}
	if ev.Summarized == 1 {
		did = append(did, "1 earlier message summarised")
	} else if ev.Summarized > 1 {
		did = append(did, fmt.Sprintf("%d earlier messages summarised", ev.Summarized))
	}
	before, after := humanCount(int64(ev.TokensBefore)), humanCount(int64(ev.TokensAfter))
	if before == after { // 3.6k → 3.6k says nothing: the figures
		before, after = fmt.Sprint(ev.TokensBefore), fmt.Sprint(ev.TokensAfter)
	}
	return fmt.Sprintf("compacted the conversation because %s: %s → %s tokens (%s); the full history stays in the session",
		why, before, after, strings.Join(did, ", "))
}

// nothingToGainText says that a compaction was not made, and why.
func nothingToGainText(ev agent.NothingToGain) string {
	what := map[string]string{"auto": "it nears the model's context window", "manual": "you asked", "overflow": "the provider refused it as too long"}[ev.Reason]
	s := fmt.Sprintf("the conversation was not compacted although %s: nothing to gain — %s; it stays at %s tokens", what, ev.Why, humanCount(int64(ev.Tokens)))
	if ev.Reason == "manual" {
		return strings.Replace(s, "although you asked", "as you asked", 1)
	}
	return s
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
			reasoning = " (reasoning " + humanCount(u.ReasoningTokens) + ")"
		}
		fmt.Fprintf(&b, "  %s/%s: %s%s · input %s (cached %s, written to cache %s) · output %s%s · %s\n",
			c.Provider, c.Model, countOf(c.Calls, "call"), unreported, humanCount(u.InputTokens), humanCount(u.CachedTokens), humanCount(u.CacheWriteTokens), humanCount(u.OutputTokens), reasoning, cost)
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
	st := m.b.Context()
	if st.Window <= 0 {
		return ""
	}
	s := fmt.Sprintf("%d%% of %s", int(st.Share()*100+0.5), humanCount(int64(st.Window)))
	if !st.WindowKnown {
		s += "?"
	}
	var cost float64
	priced := false
	for _, c := range m.b.Costs() {
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
