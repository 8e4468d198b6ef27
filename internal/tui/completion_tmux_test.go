package tui

import (
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// Issue 28, walk 8: Tab completes a resource template's {variables} one
// after the other — each with the server's values (several: Tab cycles, →
// keeps one), and where the server has none, Tab moves into the variable
// for the person to type it.
func TestTemplateMentionCompletesEveryVariable(t *testing.T) {
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Read it."}})
	p := startTmux(t, dir, fakeModelConfig(model.URL)+testServerConfig("notes", "notes"), 100, 30)
	p.waitFor("fake/fake-model", "1/1 servers")
	p.keys("summarise @notes:iss")
	p.keys("Tab")
	p.waitFor("@notes:issue://{owner}/{repo}/{number}")
	p.keys("Tab") // two owners: Tab cycles through them, → keeps one
	p.waitFor("(tab again cycles, → keeps one)", "@notes:issue://otter-sh/{repo}/{number}", "@notes:issue://ottertail/{repo}/{number}")
	p.keys("Tab")
	p.waitFor("› summarise @notes:issue://otter-sh/{repo}/{number}")
	p.keys("Right", "Tab") // on to {repo}, which has one value for this owner
	p.waitFor("› summarise @notes:issue://otter-sh/otter/{number}")
	p.keys("Tab") // {number} has no values: Tab moves into it
	p.waitFor("type the number here (notes offers no values for it)")
	p.waitGone("{number}")
	p.keys("28", " and @notes:fi", "Tab")
	p.waitFor("› summarise @notes:issue://otter-sh/otter/28 and @notes:file://{folder}/{name}")
	// {folder} has no values: Tab moves into it, before "/{name}".
	p.keys("Tab")
	p.waitFor("type the folder here (notes offers no values for it), then tab goes on to the next {variable}", "@notes:file:///{name}")
	p.keys("docs", "Tab")
	p.waitFor("› summarise @notes:issue://otter-sh/otter/28 and @notes:file://docs/notes.txt")
	p.keys("Enter")
	p.waitFor("Read it.")
	reqs := model.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Messages[0].Text, "the text of issue://otter-sh/otter/28") ||
		!strings.Contains(reqs[0].Messages[0].Text, "the text of file://docs/notes.txt") {
		t.Errorf("the model was sent %+v; want the texts of issue://otter-sh/otter/28 and file://docs/notes.txt", reqs)
	}
}

// Issue 28, walk 8: on a small screen /help shows its start — the
// commands, /mcp resources and /open among them — with the rule saying
// more is below; /model and the status line name windows as they are
// usually named: 1M, 1.2M, 200k, not 1000.0k or 200.0k.
func TestHelpAndWindowSizesOnASmallScreen(t *testing.T) {
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Hello."}, InputTokens: 8000, OutputTokens: 10})
	cfg := fakeModelConfig(model.URL) + `context_window = 200000

[providers.fake.models."big-model"]
context_window = 1000000

[providers.fake.models."bigger-model"]
context_window = 1200000
`
	p := startTmux(t, dir, cfg, 80, 24)
	p.waitFor("fake/fake-model")
	p.keys("/help", "Enter")
	s := p.waitFor("Commands", "/mcp resources [server]", "/open [N]", "more below")
	if strings.Contains(s, "ctrl+y view the latest image") {
		t.Errorf("/help shows its end, not its start:\n%s", s)
	}
	p.keys("End")
	p.waitFor("ctrl+y view the latest image")
	p.waitGone("more below")

	p.keys("hello", "Enter")
	p.waitFor("Hello.", "4% of 200k")
	p.keys("/model fake/big-model", "Enter")
	p.waitFor("(context window 1M tokens)")
	p.keys("/model fake/bigger-model", "Enter")
	p.waitFor("(context window 1.2M tokens)")
}
