package tui

import (
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// Issue 28, walk 6: a resumed conversation shows what was on the screen:
// a call the person denied says "✗ denied" and why (not that the tool
// failed), and an automatic compaction's notice stays where it happened.
func TestResumeShowsDenialAndCompaction(t *testing.T) {
	dir := t.TempDir()
	// About 6.6k tokens of answer in an 8k window: the next message passes
	// compact_at (80 %) and is compacted first, with a summary.
	long := strings.Repeat("Otters are mustelids. ", 1200)
	model := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Text: []string{long}},
		llmtest.Reply{Text: []string{"The user asked about otters: mustelids."}}, // the compaction's summary
		llmtest.Reply{Calls: []llmtest.Call{{ID: "call_1", Name: "scrape_page", Args: `{"url":"https://example.com"}`}}},
		llmtest.Reply{Text: []string{"Fine, I will not fetch it."}},
	)
	p := startTmux(t, dir, fakeModelConfig(model.URL)+"context_window = 8000\n", 100, 40)
	p.waitFor("fake/fake-model")
	p.keys("tell me about otters", "Enter")
	p.waitFor("Otters are mustelids.")
	p.keys("now fetch example.com", "Enter")
	p.waitFor("Allow scrape_page?")
	p.keys("Escape") // deny
	live := p.waitFor("Fine, I will not fetch it.")
	for _, want := range []string{"✗ denied", "the user denied permission to run scrape_page", "compacted the conversation because it neared"} {
		if !strings.Contains(live, want) {
			t.Fatalf("the live screen does not show %q:\n%s", want, live)
		}
	}
	for i, r := range model.Requests() {
		t.Logf("request %d: %d tokens", i, r.InputTokens)
	}
	p.quit()

	p.restart(dir, "-c")
	s := p.waitFor("Continuing session", "Fine, I will not fetch it.")
	if !strings.Contains(s, "✗ denied") || !strings.Contains(s, "the user denied permission to run scrape_page") || strings.Contains(s, "failed") {
		t.Errorf("the resumed conversation does not show the denial as it was shown (✗ denied and why):\n%s", s)
	}
	if !strings.Contains(s, "compacted the conversation because it neared") {
		t.Errorf("the resumed conversation dropped the automatic compaction's notice:\n%s", s)
	}
	p.quit()
}
