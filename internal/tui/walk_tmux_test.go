package tui

import (
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// A newcomer finds a conversation again by the name they gave it: the
// picker searches titles (a /rename'd session is found by its new name,
// which no message holds) and shows what matched; /cost counts only the
// conversation in front of the person, not an earlier one of the same run
// (/new); /model states a 1M window as 1M.
func TestFindingSessionsAndTheirCost(t *testing.T) {
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Text: []string{"Otters sleep holding hands."}, InputTokens: 1200, OutputTokens: 30},
		llmtest.Reply{Text: []string{"Beavers build dams."}, InputTokens: 800, OutputTokens: 20},
	)
	cfg := fakeModelConfig(model.URL) + `
[providers.fake.models."big-model"]
context_window = 1000000
`
	p := startTmux(t, dir, cfg, 120, 30)
	p.waitFor("fake/fake-model")
	p.keys("tell me about otters", "Enter")
	p.waitFor("Otters sleep holding hands.")
	p.keys("/rename Zanzibar trip", "Enter")
	p.waitFor("Zanzibar")
	p.keys("/new", "Enter")
	p.waitGone("Otters sleep holding hands.")
	p.keys("tell me about beavers", "Enter")
	p.waitFor("Beavers build dams.")

	p.keys("/cost", "Enter")
	s := p.waitFor("tokens and cost in this session", "fake/fake-model: 1 call")
	if strings.Contains(s, "2 calls") {
		t.Errorf("/cost counts the conversation before /new:\n%s", s)
	}

	p.keys("/resume", "Enter")
	p.waitFor("Resume a conversation")
	p.keys("zanzi")
	s = p.waitFor("1 · this directory's first", "Zanzibar trip")
	if strings.Contains(s, "no saved conversation mentions") {
		t.Errorf("the picker does not find the renamed session by its title:\n%s", s)
	}
	p.keys("Escape")
	p.waitGone("Resume a conversation")

	// A word only a message holds: the picker shows the matching text.
	p.keys("/resume", "Enter")
	p.waitFor("Resume a conversation")
	p.keys("holding")
	p.waitFor("Otters sleep holding hands")
	p.keys("Escape")
	p.waitGone("Resume a conversation")

	p.keys("/model fake/big-model", "Enter")
	s = p.waitFor("the next message goes to fake/big-model")
	if !strings.Contains(s, "(context window 1M tokens)") {
		t.Errorf("/model does not state a 1M window as 1M:\n%s", s)
	}
}
