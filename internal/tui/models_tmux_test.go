package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// /model in the real binary opens a picker of what the provider's API
// offers, with window and price; the model chosen there and the reasoning
// level /model sets are what the next request goes with.
func TestModelListsAndSetsReasoningInTmux(t *testing.T) {
	srv := llmtest.New(t, llmtest.Anthropic, llmtest.Reply{Thinking: []string{"Greet back."}, Text: []string{"Hello from haiku."}})
	srv.Models = []string{"claude-sonnet-4-6", "claude-haiku-4-5"}
	cfg := anthropicConfig(srv.URL, "claude-sonnet-4-6", "")
	p := startTmux(t, t.TempDir(), cfg, 120, 30)
	p.waitFor("fake/claude-sonnet-4-6")
	p.keys("/model", "Enter")
	p.waitFor("› fake/claude-sonnet-4-6  1M window · $3/$15 per M in/out · in use",
		"fake/claude-haiku-4-5  200k window · $1/$5 per M in/out",
		"reasoning: off (/model off|low|medium|high sets it)")
	p.keys("Down", "Enter")
	p.waitFor("the next message goes to fake/claude-haiku-4-5")
	p.keys("/model high", "Enter")
	p.waitFor("reasoning for the next message: high")
	p.keys("hello", "Enter")
	p.waitFor("Hello from haiku.", "✻ thinking · 11 chars")
	r := srv.Requests()
	if len(r) != 1 || r[0].Model != "claude-haiku-4-5" || r[0].Thinking == 0 {
		t.Fatalf("requests = %+v, want one to claude-haiku-4-5 with thinking on", r)
	}
	p.quit()
}

// /model ollama/fake-model, a model neither the configuration nor the
// built-in table knows, asks Ollama its window when it is chosen (issue
// 35, item 7): the notice says the 3.1k it runs with, and the status bar
// shows it without "?", before any message. Before, the notice stated
// the 8.2k guess as the window ("context window 8.2k tokens") while the
// status bar showed "8.2k?"; the real figure came with the first message.
func TestModelSwitchLearnsTheWindowInTmux(t *testing.T) {
	claude := llmtest.New(t, llmtest.Anthropic)
	ollama := llmtest.New(t, llmtest.OpenAI)
	ollama.Host = llmtest.HostOllama
	ollama.Models = []string{"fake-model"}
	ollama.Info = map[string]llmtest.ModelInfo{"fake-model": {Window: 40960, Loaded: 3072}}
	cfg := anthropicConfig(claude.URL, "claude-sonnet-4-6", fmt.Sprintf("\n[providers.ollama]\ntype = \"openai\"\nbase_url = %q\n", ollama.URL))
	p := startTmux(t, t.TempDir(), cfg, 120, 30)
	p.waitFor("fake/claude-sonnet-4-6")
	p.keys("/model ollama/fake-model", "Enter")
	screen := p.waitFor("the next message goes to ollama/fake-model", "context window of ollama/fake-model: 3.1k tokens")
	if strings.Contains(screen, "8.2k") {
		t.Errorf("the screen still shows the 8.2k guess:\n%s", screen)
	}
	p.waitGone("8.2k?")
	if r := ollama.Requests(); len(r) != 0 {
		t.Errorf("%d chat requests to Ollama, want none: the window is learned without a message", len(r))
	}
	p.quit()
}
