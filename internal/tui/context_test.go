package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/record"
)

// The status bar shows the share of the window in use and the session's
// cost; /cost shows each model's tokens; /model lists and switches; /compact
// asks the model for a summary that keeps what it names, and its notice is
// shown and saved with the session (app saves it, for otter -p alike).
func TestContextWindowCostAndModel(t *testing.T) {
	local := llmtest.New(t, llmtest.OpenAI)
	local.Respond = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"ok"}} }
	b := &fakeHost{provider: Provider{Name: "anthropic", Model: "claude-sonnet-4-6"},
		providerConfig: "context_window = 200000\n",
		listed:         []string{"claude-sonnet-4-6"},
		config:         fmt.Sprintf("[providers.local]\ntype = \"openai\"\nbase_url = %q\napi_key = \"k\"\nmodel = \"qwen3:8b\"\n", local.URL),
		replies:        []llmtest.Reply{{Text: []string{"Done."}, InputTokens: 61_500, OutputTokens: 500}}}
	h := start(t, b)
	h.enterLine("go on")
	price := b.app.Facts("anthropic", "claude-sonnet-4-6").Price
	cost := fmt.Sprintf("$%.4f", (61_500*price.Input+500*price.Output)/1e6)
	h.waitFor("Done.", "31% of 200k · "+cost)
	h.enterLine("/cost")
	h.waitFor("anthropic/claude-sonnet-4-6: 1 call · input 61.5k (cached 0", "output 500", cost)
	// /model alone opens a picker on the model in use; typing filters,
	// enter switches.
	h.enterLine("/model")
	h.waitFor("Choose a model", "› anthropic/claude-sonnet-4-6  200k window · $3/$15 per M in/out · in use", "local/qwen3:8b",
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
	if p := providerOf(b.app); p.Name != "local" || p.Model != "qwen3:8b" || thinkingOf(b.app) != "medium" {
		t.Errorf("the switch did not reach the core: provider %+v, reasoning %q", p, thinkingOf(b.app))
	}
	h.enterLine("/compact the URLs")
	h.waitFor("compacting the conversation…")
	s := h.waitFor("the conversation was not compacted as you asked")
	asked := false
	for _, r := range local.Requests() {
		asked = asked || strings.Contains(r.System+fmt.Sprint(r.Messages), "the URLs")
	}
	if !asked {
		t.Errorf("/compact did not reach the model with what to keep; requests %+v", local.Requests())
	}
	// The notice is in the session, where a resumed conversation shows it.
	store, err := b.app.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	entries, err := store.Entries(context.Background(), b.conv.SessionID(), 0)
	if err != nil {
		t.Fatal(err)
	}
	saved := false
	for _, e := range entries {
		saved = saved || (e.Message.Role == record.RoleNotice && strings.HasPrefix(e.Message.Text, "the conversation was not compacted as you asked"))
	}
	if !saved {
		t.Errorf("the compaction notice is not saved with the session; screen:\n%s", s)
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

// A request too long for the window gets the TUI's commands only where
// they help.
func TestTooLongHintNamesWhatHelps(t *testing.T) {
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
