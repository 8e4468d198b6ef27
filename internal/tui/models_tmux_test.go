package tui

import (
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
