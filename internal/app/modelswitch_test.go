package app

import (
	"context"
	"fmt"
	"testing"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// Switching to another provider with /model takes that provider's
// reasoning level (issue 35, item 2): claude reasons at "medium", gpt (a
// Responses API) at "high"; after a message to claude, the switch to gpt
// sends effort "high", as `otter -p --provider gpt` does. A level chosen
// with /model LEVEL was chosen for the provider left behind and gives way
// too; another model of the same provider keeps it.
//
// Before, the agent kept claude's level: effort "medium".
func TestSwitchingProviderTakesItsReasoningLevel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	claude := llmtest.New(t, llmtest.Anthropic)
	gpt := llmtest.New(t, llmtest.Responses)
	for _, srv := range []*llmtest.Server{claude, gpt} {
		srv.Respond = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"Hello."}} }
	}
	a := sessionApp(t, fmt.Sprintf(`
[agent]
provider = "claude"
model = "claude-sonnet-4-6"

[providers.claude]
type = "anthropic"
base_url = %q
api_key = "k"
thinking = "medium"

[providers.gpt]
type = "openai-responses"
base_url = %q
api_key = "k"
thinking = "high"
model = "gpt-5"
`, claude.URL, gpt.URL))
	ag := a.NewAgent(AgentOptions{})
	send := func(text string) {
		t.Helper()
		if err := ag.Send(ctx, text); err != nil {
			t.Fatalf("send %q: %v", text, err)
		}
	}
	efforts := func() []string {
		var out []string
		for _, r := range gpt.Requests() {
			out = append(out, r.Effort)
		}
		return out
	}

	send("hello claude")
	if r := claude.Requests(); len(r) != 1 || r[0].Thinking == 0 {
		t.Fatalf("claude's requests = %+v, want one with thinking on", r)
	}
	if err := a.SetModel("gpt", "gpt-5"); err != nil {
		t.Fatal(err)
	}
	send("hello gpt")
	if got := efforts(); len(got) != 1 || got[0] != "high" {
		t.Fatalf("after /model gpt/gpt-5 the request's effort is %q, want [high], gpt's own setting", got)
	}
	if got := a.Thinking().Effort; got != "high" {
		t.Errorf("Thinking() after the switch = %q, want high", got)
	}

	// A level chosen for claude gives way to gpt's when switching.
	if err := a.SetModel("claude", "claude-sonnet-4-6"); err != nil {
		t.Fatal(err)
	}
	a.SetThinking(llm.Thinking{Effort: "low"})
	if err := a.SetModel("gpt", "gpt-5"); err != nil {
		t.Fatal(err)
	}
	send("again gpt")
	// Another model of the same provider keeps a level chosen for it.
	a.SetThinking(llm.Thinking{Effort: "low"})
	if err := a.SetModel("gpt", "gpt-5-mini"); err != nil {
		t.Fatal(err)
	}
	send("gpt mini")
	if got := efforts(); fmt.Sprint(got) != "[high high low]" {
		t.Errorf("efforts = %q, want [high high low]: gpt's own level after switching from claude, the chosen one within gpt", got)
	}
}
