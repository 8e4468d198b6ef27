package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/otter-sh/otter/internal/compact"
	"github.com/otter-sh/otter/internal/hooks"
	"github.com/otter-sh/otter/internal/llm"
)

// This file keeps the conversation inside the model's context window and
// counts what it costs: token accounting, automatic, reactive and
// on-demand compaction, and the per-model usage ledger.

// minAnswerTokens is the least room a request leaves for the answer
// before otter compacts to make more.
const minAnswerTokens = 256

// ContextState is the conversation's share of the model's context window.
type ContextState struct {
	Provider, Model string
	// Window is the model's context window in tokens; WindowKnown is false
	// when it is llm.DefaultContextWindow standing in for a figure nobody
	// gave (see llm.ModelFacts.MissingWindowNotice).
	Window      int
	WindowKnown bool
	// Used is the tokens the next request would take: the provider's count
	// of the last call plus an estimate of what was added since; without a
	// count (a resumed or compacted conversation), an estimate of the
	// messages, the system prompt and the tools.
	Used int
	// CompactAt is the share of Window at which otter compacts.
	CompactAt float64
}

// Share is Used as a share of Window.
func (c ContextState) Share() float64 {
	if c.Window <= 0 {
		return 0
	}
	return float64(c.Used) / float64(c.Window)
}

// ModelUsage is what one model was used for in this conversation (since
// it started or was loaded in this run).
type ModelUsage struct {
	Provider, Model string
	Usage           llm.Usage
	Calls           int
	// Unreported of the Calls came back without token counts (some
	// OpenAI-compatible servers send none): Usage leaves them out.
	Unreported int
	// Cost in US dollars, when Priced (the model has a price).
	Cost   float64
	Priced bool
}

// Compacted reports a compaction of the conversation: before the next
// request (Reason "auto"), on the person's request ("manual"), or after the
// provider refused a request as too long ("overflow").
type Compacted struct {
	Reason       string
	TokensBefore int
	TokensAfter  int
	// Elided is how many old tool results became one-line stubs;
	// Summarized how many messages a summary replaced (0: none).
	Elided     int
	Summarized int
	Summary    string
}

// NothingToGain reports a compaction that was tried (Reason as in
// Compacted) and not made: neither stubs for old tool results nor a
// summary would make the conversation shorter, so it stays as it was.
// Tokens is what it takes (as Context's Used); Why says what stood in the
// way. An automatic compaction is not tried again on the same messages.
type NothingToGain struct {
	Reason string
	Tokens int
	Why    string
}

// ContextNotice is something the person should know about the context
// window, such as a model whose window otter has to guess.
type ContextNotice struct{ Text string }

func (Compacted) isEvent()     {}
func (NothingToGain) isEvent() {}
func (ContextNotice) isEvent() {}

// CompactionRecorder is a Recorder that also saves compactions: that the
// messages recorded before kept (the latest messages, kept verbatim, which
// were recorded before) are, for the model, replaced by summary. The
// originals stay stored.
type CompactionRecorder interface {
	RecordCompaction(summary string, kept []llm.Message, before, after int64)
}

// windowState is the accounting of one conversation.
type windowState struct {
	mu sync.Mutex
	// last is the usage of the latest model call; lastLen the length of the
	// history it covered, its answer included (-1: no call since the
	// history last changed shape).
	last    llm.Usage
	lastLen int
	ledger  []ModelUsage
	// fixed is what the latest request took besides its messages: the
	// system prompt and the tools (0: no request yet).
	fixed   int
	noticed map[string]bool // models whose missing window was told
	// barren is the conversation a compaction had nothing to gain on: its
	// messages' count and tokens and the window then. The same
	// conversation is not compacted again (a summary call each time).
	barren barrenKey
	probed map[string]bool // models whose provider was asked its window
	// started is the time the system prompt gives as today's date: fixed
	// for the conversation, so that the prompt's prefix stays the same
	// between requests and the provider's prompt cache serves it.
	started time.Time
}

// promptTime is the conversation's fixed time for the system prompt.
func (a *Agent) promptTime() time.Time {
	w := &a.window
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started.IsZero() {
		w.started = a.opts.Now()
	}
	return w.started
}

// newConversation forgets what belonged to the previous conversation,
// its ledger included: /cost reports the conversation in front of the
// person, not earlier ones of the same run.
func (a *Agent) newConversation() {
	a.forgetCount()
	a.window.mu.Lock()
	a.window.started = time.Time{}
	a.window.ledger = nil
	a.window.mu.Unlock()
}

// refusalSource is the Source of a window a provider stated when it
// refused a request as too long: the truth about the window, whatever the
// configuration or the table said.
const refusalSource = "the provider's refusal of a longer request"

// facts returns what is known of provider's model: the configuration and
// the built-in table, else what the provider said of the window when
// asked; a window the provider stated in a refusal overrides all.
func (a *Agent) facts(provider llm.Provider, model string) llm.ModelFacts {
	return modelFacts(a.opts.Facts, a.opts.Windows, provider, model)
}

// modelFacts are the facts of model of provider: facts' (the
// configuration's and the built-in table's), with the context window
// windows learned where those do not know it.
func modelFacts(facts func(provider, model string) llm.ModelFacts, windows *llm.WindowCache, provider llm.Provider, model string) llm.ModelFacts {
	name := ""
	if provider != nil {
		name = provider.Name()
	}
	var f llm.ModelFacts
	if facts != nil {
		f = facts(name, model)
	} else {
		f = llm.Facts(llm.Configured{}, model)
	}
	if w, ok := windows.Get(name, model); ok && (!f.WindowKnown || w.Source == refusalSource) {
		f.ContextWindow, f.WindowKnown = w.Tokens, true
		f.MaxOutputTokens = min(f.MaxOutputTokens, w.Tokens/4)
	}
	return f
}

// learnWindow asks the provider, once per model and conversation, the
// window of a model that neither the configuration nor the built-in
// table knows; what it says is kept in the window cache.
func (a *Agent) learnWindow(ctx context.Context, provider llm.Provider, model string) {
	prober, ok := provider.(llm.WindowProber)
	if !ok || a.facts(provider, model).WindowKnown {
		return
	}
	key := provider.Name() + "\x00" + model
	w := &a.window
	w.mu.Lock()
	asked := w.probed[key]
	if w.probed == nil {
		w.probed = map[string]bool{}
	}
	w.probed[key] = true
	w.mu.Unlock()
	if asked {
		return
	}
	learned, err := prober.ProbeWindow(ctx, model)
	if err != nil {
		a.opts.Logger.Debug("the provider did not say the model's context window", "provider", provider.Name(), "model", model, "err", err)
		return
	}
	if err := a.opts.Windows.Put(provider.Name(), model, learned); err != nil {
		a.opts.Logger.Warn("could not save the learned context window", "err", err)
	}
}

// LearnWindow asks the provider the context window of the model in use
// when neither the configuration nor the built-in table knows it, as the
// next message would: a front end calls it when a model is chosen, so
// that what it shows of the window is the provider's figure rather than
// the guess. It may take a few seconds (one question to the server, each
// bounded); ctx cancels it.
func (a *Agent) LearnWindow(ctx context.Context) {
	a.mu.Lock()
	p, m := a.provider, a.model
	a.mu.Unlock()
	if p != nil {
		a.learnWindow(ctx, p, m)
	}
}

// Facts returns what otter knows of the model in use.
func (a *Agent) Facts() llm.ModelFacts {
	a.mu.Lock()
	p, m := a.provider, a.model
	a.mu.Unlock()
	return a.facts(p, m)
}

// Context returns the conversation's use of the model's context window.
func (a *Agent) Context() ContextState {
	a.mu.Lock()
	p, m, s := a.provider, a.model, a.settings
	history := append([]llm.Message(nil), a.history...)
	a.mu.Unlock()
	f := a.facts(p, m)
	c := ContextState{Model: m, Window: f.ContextWindow, WindowKnown: f.WindowKnown, CompactAt: compactAt(s)}
	if p != nil {
		c.Provider = p.Name()
	}
	c.Used = a.tokensInUse(history, a.fixedTokens(p, m, s))
	return c
}

// fixedTokens is what a request takes besides its messages: the system
// prompt and the tools offered, as the latest request had them; before
// this run's first request (a resumed conversation), as the next would,
// planned without changing anything. Left out, a meter read after a
// compaction or a resume showed a fraction of what the next request took
// (a few % where the tools alone took a third of a small window).
func (a *Agent) fixedTokens(provider llm.Provider, model string, s Settings) int {
	a.window.mu.Lock()
	fixed := a.window.fixed
	a.window.mu.Unlock()
	if fixed > 0 || provider == nil {
		return fixed
	}
	tools := a.planTools(provider, model, s.ToolSearch).offered()
	return compact.RequestTokens(llm.Request{System: a.systemPrompt(s), Tools: tools})
}

// setFixed records what a request takes besides its messages.
func (a *Agent) setFixed(fixed int) {
	a.window.mu.Lock()
	a.window.fixed = fixed
	a.window.mu.Unlock()
}

// DefaultCompactAt is the share of the context window at which a
// conversation is compacted when Settings.CompactAt does not say (the
// config's own default is the same figure).
const DefaultCompactAt = 0.8

func compactAt(s Settings) float64 {
	if s.CompactAt <= 0 || s.CompactAt > 1 {
		return DefaultCompactAt
	}
	return s.CompactAt
}

// tokensInUse is the provider's count of the last call plus an estimate of
// the messages added since; without a usable count, an estimate of it
// all. fixed is the system prompt and tools, when known.
func (a *Agent) tokensInUse(history []llm.Message, fixed int) int {
	w := &a.window
	w.mu.Lock()
	last, n := w.last, w.lastLen
	w.mu.Unlock()
	if n > 0 && n <= len(history) && last.InputTokens > 0 {
		return int(last.InputTokens+last.OutputTokens) + compact.MessagesTokens(history[n:])
	}
	return fixed + compact.MessagesTokens(history)
}

// account records the usage of one model call, for the ledger and, when
// covering is ≥ 0, as the count of the history's first covering messages.
// A call whose provider reported no usage (some OpenAI-compatible servers
// do not) is still counted as a call.
func (a *Agent) account(provider llm.Provider, model string, u llm.Usage, covering int) {
	f := a.facts(provider, model)
	w := &a.window
	w.mu.Lock()
	defer w.mu.Unlock()
	if covering >= 0 && u.InputTokens > 0 {
		w.last, w.lastLen = u, covering
	}
	name := provider.Name()
	for i := range w.ledger {
		e := &w.ledger[i]
		if e.Provider == name && e.Model == model {
			e.Usage, e.Calls = e.Usage.Add(u), e.Calls+1
			if u == (llm.Usage{}) {
				e.Unreported++
			}
			if e.Priced = f.HasPrice; e.Priced {
				e.Cost += f.Price.Cost(u)
			}
			return
		}
	}
	e := ModelUsage{Provider: name, Model: model, Usage: u, Calls: 1, Priced: f.HasPrice}
	if u == (llm.Usage{}) {
		e.Unreported = 1
	}
	if f.HasPrice {
		e.Cost = f.Price.Cost(u)
	}
	w.ledger = append(w.ledger, e)
}

// Costs returns the tokens and cost of every model called in this
// conversation, in the order they were first used.
func (a *Agent) Costs() []ModelUsage {
	a.window.mu.Lock()
	defer a.window.mu.Unlock()
	return append([]ModelUsage(nil), a.window.ledger...)
}

// TotalCost is the cost of every priced model call; priced is false when
// some call's model has no price.
func (a *Agent) TotalCost() (cost float64, priced bool) {
	priced = true
	for _, e := range a.Costs() {
		cost += e.Cost
		priced = priced && e.Priced
	}
	return cost, priced
}

// forgetCount drops the last call's count after the history changed shape
// (a compaction, a resumed or reset conversation).
func (a *Agent) forgetCount() {
	a.window.mu.Lock()
	a.window.last, a.window.lastLen = llm.Usage{}, 0
	a.window.mu.Unlock()
}

// fit prepares req for the model's context window: it compacts the
// conversation when the request would pass compact_at of the window (or
// leave too little room for the answer), cuts a latest tool result that
// alone does not fit, and lowers MaxTokens to the room left. req.Messages
// is refreshed from the history.
func (a *Agent) fit(ctx context.Context, provider llm.Provider, req *llm.Request, s Settings) {
	f := a.facts(provider, req.Model)
	a.noticeWindow(provider, f)
	think := thinkingTokens(provider, &req.Thinking, f)
	answer := answerTokens(req.MaxTokens, provider, f)
	fixed := compact.RequestTokens(llm.Request{System: req.System, Tools: req.Tools})
	a.setFixed(fixed)
	used := a.tokensInUse(a.Messages(), fixed)
	limit := int(float64(f.ContextWindow) * compactAt(s))
	if used > limit || f.ContextWindow-used-think < min(answer, minAnswerTokens) {
		_, _ = a.compact(ctx, provider, req.Model, "auto", "", fixed, f, s) // failing, the request goes as it is
	}
	a.cutToFit(fixed, answer+think, f)
	req.Messages = a.Messages()
	req.MaxTokens = maxTokens(req.MaxTokens, answer, f.ContextWindow-fixed-think-compact.MessagesTokens(req.Messages), provider, f)
}

// thinkingTokens is the room an Anthropic or OpenAI Responses request
// keeps for thinking, which its max_tokens (max_output_tokens) covers on
// top of the answer: the budget asked for, lowered to a quarter of the
// window; thinking is turned off for a window too small to hold the
// Messages API's least budget.
func thinkingTokens(provider llm.Provider, t *llm.Thinking, f llm.ModelFacts) int {
	switch provider.(type) {
	case *llm.Anthropic, *llm.Responses:
	default:
		return 0
	}
	if !t.On() {
		return 0
	}
	n := min(t.BudgetTokens(), f.ContextWindow/4)
	if n < llm.MinThinkingBudget {
		*t = llm.Thinking{}
		return 0
	}
	t.Budget = n
	return n
}

// maxTokens is the max_tokens of a request that leaves room tokens of the
// window: the configured figure or the Anthropic default, lowered to the
// room; an OpenAI request without one gets one only when the room is less
// than the model's output limit (the API counts the answer in the window).
func maxTokens(configured, answer, room int, provider llm.Provider, f llm.ModelFacts) int {
	_, anthropic := provider.(*llm.Anthropic)
	if configured <= 0 && !anthropic && room >= f.MaxOutputTokens {
		return 0
	}
	return max(min(answer, room), 1)
}

// answerTokens is the room a request keeps for the answer: max_tokens,
// else the provider's default, within the model's output limit.
func answerTokens(maxTokens int, provider llm.Provider, f llm.ModelFacts) int {
	n := maxTokens
	if n <= 0 {
		n = f.MaxOutputTokens
		if _, ok := provider.(*llm.Anthropic); ok {
			n = min(n, llm.DefaultAnthropicMaxTokens)
		} else {
			n = min(n, 4096) // what the room is kept for when the API sets no limit
		}
	}
	return max(min(n, f.MaxOutputTokens, f.ContextWindow/4), 1)
}

// noticeWindow tells the person, once per model, that its window is a
// guess and how to give the real figure.
func (a *Agent) noticeWindow(provider llm.Provider, f llm.ModelFacts) {
	if f.WindowKnown {
		return
	}
	w := &a.window
	w.mu.Lock()
	key := provider.Name() + "\x00" + f.Model
	told := w.noticed[key]
	if w.noticed == nil {
		w.noticed = map[string]bool{}
	}
	w.noticed[key] = true
	w.mu.Unlock()
	if !told {
		a.emit(ContextNotice{Text: f.MissingWindowNotice(provider.Name())})
	}
}

// barrenKey identifies a conversation and window a compaction had
// nothing to gain on.
type barrenKey struct{ messages, tokens, window int }

// compact makes the conversation fit: it elides old tool results and, if
// that is not enough (or force), summarises the older turns with the
// model. It installs the result and reports Compacted only when it is
// shorter than the conversation was; otherwise the conversation stays and
// NothingToGain says so (once per conversation and window). changed
// reports whether it compacted; the error is a summary that was needed
// and could not be had.
func (a *Agent) compact(ctx context.Context, provider llm.Provider, model, reason, keep string, fixed int, f llm.ModelFacts, s Settings) (changed bool, err error) {
	a.mu.Lock()
	history := append([]llm.Message(nil), a.history...)
	a.mu.Unlock()
	if len(history) == 0 {
		return false, nil
	}
	before := a.tokensInUse(history, fixed)
	// was and the result are otter's estimates, like for like: before may
	// be the provider's count, which no estimate of the result can be
	// compared with (a count of 1.9k "compacted" to an estimate of 2.1k).
	was := fixed + compact.MessagesTokens(history)
	key := barrenKey{len(history), was, f.ContextWindow}
	a.window.mu.Lock()
	barren := a.window.barren == key
	a.window.mu.Unlock()
	if barren && reason != "manual" {
		return false, nil // told already; the caller goes on without
	}
	if reason != "manual" {
		// The PreCompact hooks of a compaction otter decides on ("auto",
		// as Claude Code names both the threshold and the overflow); the
		// person's /compact runs them where it is asked for (app).
		a.runHooks(ctx, hooks.PreCompact, hooks.Input{Trigger: "auto"})
	}
	nothing := func(why string) (bool, error) {
		a.window.mu.Lock()
		a.window.barren = key
		a.window.mu.Unlock()
		a.emit(NothingToGain{Reason: reason, Tokens: before, Why: why})
		return false, nil
	}
	// After a compaction the conversation takes about half of what
	// triggers one, so that the next many turns go without.
	target := int(float64(f.ContextWindow)*compactAt(s)/2) - fixed
	recent := compact.Split(history, max(target/2, 1))
	if recent == 0 {
		recent = len(history)
	}
	ev := Compacted{Reason: reason, TokensBefore: before}
	ev.Elided = compact.Elide(history, recent, target, a.spill())
	summarize := reason == "manual" || compact.MessagesTokens(history) > target
	why := fmt.Sprintf("its messages take %d tokens, less than a summary would save; the system prompt and the tools take %d", compact.MessagesTokens(history), fixed)
	if summarize && recent > 0 && recent < len(history) {
		summary, err := a.summarize(ctx, provider, model, history[:recent], keep, f)
		if err != nil {
			if ev.Elided > 0 {
				a.replaceHistory(history, ev, fixed, was)
			}
			return ev.Elided > 0, err
		}
		// A summary that is not shorter than what it replaces (a model that
		// ran on, or little to summarise) would only cost tokens: the
		// messages stay.
		got, old := compact.MessageTokens(compact.SummaryMessage(summary)), compact.MessagesTokens(history[:recent])
		if got < old {
			ev.Summary, ev.Summarized = summary, recent
			history = append([]llm.Message{compact.SummaryMessage(summary)}, history[recent:]...)
		} else {
			why = fmt.Sprintf("the model's summary (%d tokens) is not shorter than the %d messages it would replace (%d tokens)", got, recent, old)
		}
	} else if summarize {
		why = "it holds only the latest turn, which stays whole"
	}
	if fixed+compact.MessagesTokens(history) >= was {
		return nothing(why)
	}
	a.replaceHistory(history, ev, fixed, was)
	return true, nil
}

// replaceHistory installs a compacted history, records the compaction and
// reports it. was is otter's estimate of the conversation it replaces.
// The count the meter reads is the one before scaled by how much shorter
// the estimate became, so that a provider's count and otter's estimate are
// never set side by side.
func (a *Agent) replaceHistory(history []llm.Message, ev Compacted, fixed, was int) {
	a.mu.Lock()
	// Messages appended meanwhile (none: Send holds busy) stay.
	a.history = history
	a.mu.Unlock()
	now := fixed + compact.MessagesTokens(history)
	ev.TokensAfter = now
	if was > 0 && ev.TokensBefore != was {
		ev.TokensAfter = int(int64(ev.TokensBefore) * int64(now) / int64(was))
	}
	a.window.mu.Lock()
	a.window.last, a.window.lastLen = llm.Usage{InputTokens: int64(ev.TokensAfter)}, len(history)
	a.window.mu.Unlock()
	if ev.Summarized > 0 {
		if r, ok := a.currentRecorder().(CompactionRecorder); ok {
			r.RecordCompaction(ev.Summary, history[1:], int64(ev.TokensBefore), int64(ev.TokensAfter))
		}
	}
	a.emit(ev)
}

// summarize asks the model for a summary of older.
func (a *Agent) summarize(ctx context.Context, provider llm.Provider, model string, older []llm.Message, keep string, f llm.ModelFacts) (string, error) {
	maxTokens := max(min(f.MaxOutputTokens, f.ContextWindow/8, 2048), 64)
	budget := f.ContextWindow - maxTokens - 64
	req := compact.SummaryRequest(model, older, keep, budget, maxTokens)
	resp, err := provider.Stream(ctx, req, func(llm.Event) {})
	if resp != nil {
		a.account(provider, model, resp.Usage, -1)
	}
	if err != nil {
		return "", fmt.Errorf("summarise the conversation to compact it: %w", err)
	}
	text := resp.Text
	if compact.Tokens(text) > maxTokens*2 {
		// A summary that ran on is cut: it must leave room for the rest.
		text = text[:maxTokens*2*compact.BytesPerToken]
	}
	if text == "" {
		return "", errors.New("summarise the conversation to compact it: the model answered with no text")
	}
	return text, nil
}

// cutToFit shortens the latest tool results when, with everything else
// compacted, they alone leave no room for the answer.
func (a *Agent) cutToFit(fixed, answer int, f llm.ModelFacts) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := len(a.history)
	if n == 0 || a.history[n-1].Role != llm.RoleTool {
		return
	}
	total := fixed + compact.MessagesTokens(a.history)
	room := f.ContextWindow - answer - total
	if room >= 0 {
		return
	}
	last := a.history[n-1]
	results := append([]llm.ToolResult(nil), last.ToolResults...)
	over := -room
	// Cut the largest results first.
	for over > 0 {
		big := -1
		for i, r := range results {
			if big < 0 || len(r.Text) > len(results[big].Text) {
				big = i
			}
		}
		size := compact.Tokens(results[big].Text)
		if big < 0 || size <= 64 {
			break
		}
		keep := max(size-over-64, 64)
		cut := compact.CutResult(results[big], keep, a.spill())
		over -= size - compact.Tokens(cut.Text)
		results[big] = cut
		if keep == 64 {
			continue
		}
	}
	last.ToolResults = results
	a.history[n-1] = last
	a.window.mu.Lock()
	a.window.last, a.window.lastLen = llm.Usage{}, 0
	a.window.mu.Unlock()
}

// spill is the tool set's spill file writer, or nil.
func (a *Agent) spill() func(string) (string, error) {
	if a.opts.Tools == nil {
		return nil
	}
	return a.opts.Tools.Spill
}

// Compact compacts the conversation now (/compact): the older turns are
// summarised, keeping in particular what keep names. When that would not
// make it shorter, it stays as it was and a NothingToGain event says why
// (not an error). It returns ErrBusy while a message is in progress.
func (a *Agent) Compact(ctx context.Context, keep string) error {
	if !a.busy.TryLock() {
		return ErrBusy
	}
	defer a.busy.Unlock()
	a.mu.Lock()
	provider, model, s := a.provider, a.model, a.settings
	n := len(a.history)
	a.mu.Unlock()
	if provider == nil {
		return a.noProvider()
	}
	if n < 2 {
		return errors.New("there is nothing to compact yet")
	}
	tools := a.offeredTools(provider, model, s.ToolSearch)
	fixed := compact.RequestTokens(llm.Request{System: a.systemPrompt(s), Tools: tools})
	a.setFixed(fixed)
	_, err := a.compact(ctx, provider, model, "manual", keep, fixed, a.facts(provider, model), s)
	return err
}

// streamFitted sends req after fitting it to the window; when the provider
// still refuses it as too long, it compacts and tries once more — unless
// that left the request no shorter — then fails with a TooLongError.
func (a *Agent) streamFitted(ctx context.Context, provider llm.Provider, req llm.Request, s Settings, emit func(llm.Event)) (*llm.Response, error) {
	a.fit(ctx, provider, &req, s)
	resp, err := provider.Stream(ctx, req, emit)
	stated, tooLong := llm.TooLong(err)
	if !tooLong || ctx.Err() != nil {
		a.accounted(provider, req, resp)
		return resp, err
	}
	refused := compact.RequestTokens(req)
	if stated > 0 {
		if err := a.opts.Windows.Put(provider.Name(), req.Model, llm.LearnedWindow{Tokens: stated, Source: refusalSource}); err != nil {
			a.opts.Logger.Warn("could not save the learned context window", "err", err)
		}
		// The tools' budget follows the window: offer again what fits it.
		req.Tools = a.offeredTools(provider, req.Model, s.ToolSearch)
		req.System = a.systemPrompt(s)
	}
	f := a.facts(provider, req.Model)
	fixed := compact.RequestTokens(llm.Request{System: req.System, Tools: req.Tools})
	if _, cerr := a.compact(ctx, provider, req.Model, "overflow", "", fixed, f, s); cerr != nil {
		return resp, fmt.Errorf("%w; compacting the conversation to make it fit failed too: %v", err, cerr)
	}
	req.Thinking = s.Thinking
	think := thinkingTokens(provider, &req.Thinking, f)
	a.cutToFit(fixed, answerTokens(s.MaxTokens, provider, f)+think, f)
	req.Messages = a.Messages()
	req.MaxTokens = maxTokens(s.MaxTokens, answerTokens(s.MaxTokens, provider, f), f.ContextWindow-fixed-think-compact.MessagesTokens(req.Messages), provider, f)
	if compact.RequestTokens(req) < refused {
		resp, err = provider.Stream(ctx, req, emit)
		if _, still := llm.TooLong(err); !still {
			a.accounted(provider, req, resp)
			return resp, err
		}
	}
	// Nothing made the request shorter, or the shorter one was refused
	// too: sending it again would only be refused again.
	return resp, a.tooLong(err, provider, req, answerTokens(s.MaxTokens, provider, f), f, stated > 0)
}

// tooLong describes a request refused as too long that compacting could
// not make fit, with what each part of it takes.
func (a *Agent) tooLong(err error, provider llm.Provider, req llm.Request, answer int, f llm.ModelFacts, stated bool) *TooLongError {
	e := &TooLongError{Err: err, Provider: provider.Name(), Window: f.ContextWindow, WindowStated: stated,
		Tools: len(req.Tools), ToolTokens: compact.ToolsTokens(req.Tools), Deferring: a.ToolOffer().Deferring,
		Fixed: compact.RequestTokens(llm.Request{System: req.System, Tools: req.Tools}), Answer: min(answer, minAnswerTokens)}
	servers := map[string]bool{}
	if a.opts.Tools != nil {
		for _, en := range a.opts.Tools.Entries() {
			servers[en.Name] = en.Info.Server != ""
		}
	}
	for _, t := range req.Tools {
		if servers[t.Name] {
			e.MCPTools++
			e.MCPToolTokens += compact.ToolsTokens([]llm.ToolSpec{t})
		}
	}
	if n := len(req.Messages); n > 0 {
		last := req.Messages[n-1]
		if last.Role == llm.RoleUser && !compact.IsSummary(last) {
			e.Latest = compact.MessageTokens(last)
			n--
		}
		e.Earlier, e.EarlierTokens = n, compact.MessagesTokens(req.Messages[:n])
	}
	return e
}

// accounted counts a response's usage: the count covers the request's
// messages and the answer that is about to join them.
func (a *Agent) accounted(provider llm.Provider, req llm.Request, resp *llm.Response) {
	if resp == nil {
		return
	}
	a.account(provider, req.Model, resp.Usage, len(req.Messages)+1)
}

// TooLongError is a request the provider refused as longer than the
// model's window, which compacting the conversation could not make fit.
// Its fields say what each part of the request takes, so that the advice
// fits the case; front ends add their own words (a new conversation,
// another model).
type TooLongError struct {
	Err      error
	Provider string
	// Window is the window otter assumed (the one the provider stated,
	// when WindowStated: then no setting of it can help).
	Window       int
	WindowStated bool
	// Fixed is what the system prompt and the tools take; Tools how many
	// tools the request offered and ToolTokens what their definitions
	// took, MCPTools and MCPToolTokens those of MCP servers' tools;
	// Deferring whether MCP tools were deferred behind tool search.
	Fixed, Tools, ToolTokens int
	MCPTools, MCPToolTokens  int
	Deferring                bool
	// Latest is what the person's latest message takes (0: the request
	// ends with something else, such as tool results); Earlier how many
	// messages come before it and EarlierTokens what they take. Answer is
	// the least room kept for the answer. All are otter's estimates.
	Latest, Earlier, EarlierTokens, Answer int
}

// MessageTooLong reports whether the latest message cannot fit even with
// no other message: only a shorter one (or a larger window) can help.
func (e *TooLongError) MessageTooLong() bool {
	return e.Latest > 0 && e.Fixed+e.Latest+e.Answer > e.Window
}

// NewConversationHelps reports whether the latest message would fit
// without the messages before it.
func (e *TooLongError) NewConversationHelps() bool {
	return e.Latest > 0 && e.Earlier > 0 && !e.MessageTooLong()
}

// DeferringHelps reports whether MCP tools are offered with their whole
// definitions, and deferring them behind tool search would spare enough
// to make the request fit.
func (e *TooLongError) DeferringHelps() bool {
	return e.MCPTools > 0 && !e.Deferring && e.MCPToolTokens >= e.over()
}

// over is by how much the request passes the window, by otter's estimate.
func (e *TooLongError) over() int { return e.Fixed + e.Latest + e.EarlierTokens + e.Answer - e.Window }

func (e *TooLongError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v\n\nThe request does not fit the model's context window (%d tokens), and compacting the conversation cannot make it fit: "+
		"the system prompt and the %d tools offered take about %d tokens", e.Err, e.Window, e.Tools, e.Fixed)
	if e.Latest > 0 {
		fmt.Fprintf(&b, ", your latest message about %d", e.Latest)
	}
	if e.Earlier > 0 {
		fmt.Fprintf(&b, ", the %d messages before it about %d", e.Earlier, e.EarlierTokens)
	}
	b.WriteString(".")
	var can []string
	if e.MessageTooLong() {
		can = append(can, fmt.Sprintf("a shorter message (by about %d tokens)", e.Fixed+e.Latest+e.Answer-e.Window))
	}
	if e.NewConversationHelps() {
		can = append(can, "a new conversation")
	}
	if e.DeferringHelps() {
		can = append(can, fmt.Sprintf(`offering the %d MCP tools (about %d tokens) only when the model searches for them: set [agent] tool_search = "always"`, e.MCPTools, e.MCPToolTokens))
	}
	can = append(can, "a model with a larger window")
	if !e.WindowStated {
		can = append(can, fmt.Sprintf("if this model's window is larger than %d tokens, setting context_window in [providers.%s]", e.Window, e.Provider))
	}
	b.WriteString(" What can help: " + strings.Join(can, "; ") + ".")
	return b.String()
}

func (e *TooLongError) Unwrap() error { return e.Err }
