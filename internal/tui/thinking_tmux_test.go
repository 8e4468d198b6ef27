package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// With thinking on, the real binary against a fake Anthropic model that
// streams a thinking block shows it as one collapsed line with its size;
// ctrl+o, the key that expands tool output, shows its text; the resumed
// conversation shows it collapsed again.
func TestThinkingCollapsedInTmux(t *testing.T) {
	thought := "The person greets me; a short greeting back is polite."
	srv := llmtest.New(t, llmtest.Anthropic, llmtest.Reply{Thinking: []string{"The person greets me; ", "a short greeting back is polite."}, Text: []string{"Hello to you too."}})
	cfg := anthropicConfig(srv.URL, "fake-model", `thinking = "low"`)
	dir := t.TempDir()
	p := startTmux(t, dir, cfg, 100, 30)
	p.waitFor("fake-model")
	p.keys("hello", "Enter")
	screen := p.waitFor("Hello to you too.", "✻ thinking · 54 chars · ctrl+o expands")
	if strings.Contains(screen, "polite") {
		t.Fatalf("collapsed, the thinking's text is on screen:\n%s", screen)
	}
	if r := srv.Requests(); len(r) != 1 || r[0].Thinking == 0 {
		t.Fatalf("requests = %+v, want one with thinking on", r)
	}
	p.keys("C-o")
	screen = p.waitFor(thought)
	if strings.Contains(screen, "ctrl+o expands") || !strings.Contains(screen, "✻ thinking · 54 chars") {
		t.Errorf("expanded, the head line changed:\n%s", screen)
	}
	p.keys("C-o")
	p.waitGone("polite.")
	p.quit()

	// Resumed, the conversation shows its thinking as it did.
	p.restart(dir, "-c")
	screen = p.waitFor("Hello to you too.", "✻ thinking · 54 chars · ctrl+o expands")
	if strings.Contains(screen, "polite") {
		t.Fatalf("resumed, the thinking is not collapsed:\n%s", screen)
	}
	p.quit()
}

// anthropicConfig is the config of a provider "fake" of type anthropic at
// url (an llmtest Anthropic peer) serving model, extra added to its table.
func anthropicConfig(url, model, extra string) string {
	return fmt.Sprintf(`
[agent]
provider = "fake"
model = %q

[providers.fake]
type = "anthropic"
base_url = %q
api_key = "test-key"
%s
`, model, url, extra)
}
