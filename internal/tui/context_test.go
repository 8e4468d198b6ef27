//go:build seamwip

package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm"
)

// The status bar shows the share of the window in use and the session's
// cost; a compaction is announced with the tokens before and after; /cost
// shows each model's tokens; /model lists and switches; /compact asks the
// core.
func TestContextWindowCostAndModel(t *testing.T) {
	b := &fakeHost{provider: Provider{Name: "anthropic", Model: "claude-sonnet-4-6"}}
	b.send = func(ctx context.Context, text string, emit func(agent.Event)) error {
		b.mu.Lock()
		b.ctxState = agent.ContextState{Window: 200_000, WindowKnown: true, Used: 62_000}
		b.costs = []agent.ModelUsage{{Provider: "anthropic", Model: "claude-sonnet-4-6", Calls: 3, Priced: true, Cost: 0.1234,
			Usage: llm.Usage{InputTokens: 90_000, CachedTokens: 70_000, OutputTokens: 1_500}}}
		b.mu.Unlock()
		emit(agent.Compacted{Reason: "auto", TokensBefore: 161_000, TokensAfter: 62_000, Elided: 4, Summarized: 30})
		emit(agent.Usage{InputTokens: 62_000, OutputTokens: 500})
		emit(agent.TurnFinished{Text: "Done."})
		return nil
	}
	h := start(t, b)
	h.enterLine("go on")
	h.waitFor("compacted the conversation because", "161k → 62k tokens", "replaced by one-line stubs", "summarised", "31% of 200k · $0.1234")
	h.enterLine("/cost")
	h.waitFor("anthropic/claude-sonnet-4-6: 3 calls · input 90k (cached 70k", "output 1.5k", "$0.1234")
	// /model alone opens a picker on the model in use; typing filters,
	// enter switches.
	h.enterLine("/model")
	h.waitFor("Choose a model", "› anthropic/claude-sonnet-4-6  200k window · in use", "local/qwen3:8b",
		"reasoning: off (/model off|low|medium|high sets it)")
	h.typeText("qwen")
	h.waitGone("claude-sonnet-4-6  200k window")
	h.press("enter")
	h.waitFor("the next message goes to local/qwen3:8b")
	h.waitGone("Choose a model")
	h.enterLine("/model medium")
	h.waitFor("reasoning for the next message: medium")
	h.enterLine("/model local/qwen3:8b")
	h.waitFor("the next message goes to local/qwen3:8b")
	if !b.did("model local/qwen3:8b") || !b.did("thinking medium") {
		t.Errorf("the switch did not reach the core: %v", b.actions)
	}
	h.enterLine("/compact the URLs")
	h.waitFor("compacting the conversation…")
	for range 200 {
		if b.did("compact the URLs") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("/compact did not reach the core: %v", b.actions)
}

func TestCompactedTextCountsInTheSingular(t *testing.T) {
	got := compactedText(agent.Compacted{Reason: "auto", TokensBefore: 7500, TokensAfter: 3000, Elided: 1, Summarized: 1})
	for _, want := range []string{"1 old tool result replaced by a one-line stub,", "1 earlier message summarised"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
	got = compactedText(agent.Compacted{Reason: "manual", TokensBefore: 7500, TokensAfter: 3000, Elided: 3, Summarized: 12})
	for _, want := range []string{"because you asked", "3 old tool results replaced by one-line stubs", "12 earlier messages summarised"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
}

func TestCostTextSaysWhenUsageWasNotReported(t *testing.T) {
	got := costText([]agent.ModelUsage{{Provider: "local", Model: "llama3", Calls: 2, Unreported: 2}})
	if !strings.Contains(got, "local/llama3: 2 calls · the provider reported no token counts") {
		t.Errorf("costText = %q", got)
	}
	got = costText([]agent.ModelUsage{{Provider: "local", Model: "llama3", Calls: 3, Unreported: 1, Usage: llm.Usage{InputTokens: 40}}})
	if !strings.Contains(got, "3 calls (1 without token counts) · input 40") {
		t.Errorf("costText = %q", got)
	}
}

// A count reads as a window is usually named, whatever its size.
func TestHumanCount(t *testing.T) {
	for n, want := range map[int64]string{
		950: "950", 1000: "1k", 1500: "1.5k", 8192: "8.2k", 62_000: "62k", 99_960: "100k", 200_000: "200k",
		999_400: "999k", 999_600: "1M", 1_000_000: "1M", 1_200_000: "1.2M", 12_345_678: "12.3M", 150_000_000: "150M",
	} {
		if got := app.TokenCount(n); got != want {
			t.Errorf("app.TokenCount(%d) = %q, want %q", n, got, want)
		}
	}
}

// /cost says how much of the output was reasoning (thinking), and only
// when there was some.
func TestCostTextShowsReasoningTokens(t *testing.T) {
	got := costText([]agent.ModelUsage{{Provider: "anthropic", Model: "claude-sonnet-4-6", Calls: 2, Usage: llm.Usage{InputTokens: 900, OutputTokens: 2500, ReasoningTokens: 1800}}})
	if !strings.Contains(got, "output 2.5k (reasoning 1.8k) ·") {
		t.Errorf("with reasoning, costText = %q", got)
	}
	got = costText([]agent.ModelUsage{{Provider: "anthropic", Model: "claude-sonnet-4-6", Calls: 1, Usage: llm.Usage{InputTokens: 900, OutputTokens: 700}}})
	if strings.Contains(got, "reasoning") {
		t.Errorf("without reasoning, costText = %q", got)
	}
}

// /model with nothing to list says why, instead of a heading over an
// empty list (a first run, with no provider configured).
func TestModelsTextWithoutModelsSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		current Provider
		err     error
		want    string
	}{
		{Provider{Help: "No model provider is configured."}, nil, "no models to choose from: no model provider is configured (send any message to see how to add one)"},
		{Provider{Name: "local", Model: "m"}, nil, "no models to choose from: the providers listed none; /model PROVIDER/MODEL switches to one by name"},
		{Provider{Name: "local", Model: "m"}, errors.New("local: connection refused"), "could not list the models: local: connection refused"},
	} {
		if got := modelsText(nil, tc.err, tc.current, agent.ContextState{}, "off"); got != tc.want {
			t.Errorf("modelsText(no models, %v, %+v) = %q, want %q", tc.err, tc.current, got, tc.want)
		}
	}
}

// What /model says of the window once the provider was asked: its figure,
// or that the figure shown is a guess and how to state the real one.
func TestWindowTextSaysAGuessIsAGuess(t *testing.T) {
	msg := windowMsg{provider: "ollama", model: "fake-model"}
	if got := windowText(msg, agent.ContextState{Window: 3072, WindowKnown: true}); got != "context window of ollama/fake-model: 3.1k tokens" {
		t.Errorf("known: %q", got)
	}
	got := windowText(msg, agent.ContextState{Window: 8192})
	for _, want := range []string{"does not say the context window of ollama/fake-model", "assumes 8.2k tokens", "context_window in [providers.ollama]"} {
		if !strings.Contains(got, want) {
			t.Errorf("unknown: %q lacks %q", got, want)
		}
	}
}

// A compaction whose figures round to the same ("3.6k → 3.6k") shows
// them whole; one with nothing to gain says so and why; a request too
// long for the window gets the TUI's commands only where they help.
func TestCompactionNoticesSayWhatHappened(t *testing.T) {
	if got := compactedText(agent.Compacted{Reason: "auto", TokensBefore: 3612, TokensAfter: 3571, Elided: 1}); !strings.Contains(got, "3612 → 3571 tokens") {
		t.Errorf("%q does not show the figures whole", got)
	}
	if got := compactedText(agent.Compacted{Reason: "auto", TokensBefore: 3612, TokensAfter: 1200, Summarized: 4}); !strings.Contains(got, "3.6k → 1.2k tokens") {
		t.Errorf("%q", got)
	}
	got := nothingToGainText(agent.NothingToGain{Reason: "manual", Tokens: 1900, Why: "the model's summary (300 tokens) is not shorter than the 1 messages it would replace (20 tokens)"})
	if want := "the conversation was not compacted as you asked: nothing to gain — the model's summary"; !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "it stays at 1.9k tokens") {
		t.Errorf("%q, want it to begin %q and end with the tokens", got, want)
	}
	alone := &agent.TooLongError{Err: errors.New("refused"), Window: 3000, Fixed: 381, Latest: 3294, Answer: 256}
	if h := tooLongHint(alone); strings.Contains(h, "/clear") || !strings.Contains(h, "/model") {
		t.Errorf("a message longer than the window: hint %q, want /model and no /clear", h)
	}
	later := &agent.TooLongError{Err: errors.New("refused"), Window: 3000, Fixed: 381, Latest: 300, Earlier: 40, EarlierTokens: 2600, Answer: 256}
	if h := tooLongHint(later); !strings.Contains(h, "/clear starts a new conversation") {
		t.Errorf("a long conversation: hint %q, want /clear", h)
	}
	if h := tooLongHint(errors.New("other")); h != "" {
		t.Errorf("another error: hint %q", h)
	}
}
