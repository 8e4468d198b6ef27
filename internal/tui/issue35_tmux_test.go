package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// Issue 35 point 10a: the first Tab on an ambiguous command prefix lists
// the candidates, also when the same text was completed before and typed
// again (the old cycle made that Tab jump to the first candidate).
func TestFirstTabListsTheCandidates(t *testing.T) {
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI)
	p := startTmux(t, dir, fakeModelConfig(model.URL), 100, 30)
	p.waitFor("fake/fake-model")
	p.keys("/co", "Tab")
	p.waitFor("(tab again cycles)  /compact  /copy  /copy code  /cost", "› /co")
	p.keys("C-u")
	p.waitGone("tab again cycles")
	p.keys("/co", "Tab")
	s := p.waitFor("(tab again cycles)  /compact  /copy  /copy code  /cost")
	if strings.Contains(s, "1/4") || strings.Contains(s, "› /compact") {
		t.Errorf("the first Tab on /co typed again jumped into an old cycle:\n%s", s)
	}
}

// Issue 35 point 10b: /mcp prompts is a browser, as /mcp tools and /mcp
// resources are: a filterable list with each prompt's arguments, and Enter
// uses the chosen prompt.
func TestMCPPromptsIsABrowser(t *testing.T) {
	peers := testpeer.Require(t)
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Used it."}})
	cfg := fakeModelConfig(model.URL) + fmt.Sprintf("\n[[mcp.servers]]\nname = \"everything\"\ncommand = %q\nargs = [%q, \"stdio\"]\n", peers.Node, peers.Everything)
	p := startTmux(t, dir, cfg, 100, 30)
	p.waitFor("1/1 servers")
	p.keys("/mcp prompts", "Enter")
	p.waitFor("Prompts", "filter:", "/mcp__everything__simple-prompt", "/mcp__everything__args-prompt", "city=…", "enter use it")
	p.keys("simple")
	p.waitFor("1 shown")
	p.waitGone("args-prompt")
	p.keys("Enter")
	p.waitFor("Used it.")
	reqs := model.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Messages[len(reqs[0].Messages)-1].Text, "simple prompt") {
		t.Errorf("the model was sent %+v; want the simple prompt's text", reqs)
	}
}

// Issue 35 point 10e: a server that fails as otter starts says so below
// the welcome line, as a notice in the transcript, not above it.
func TestStartupServerErrorsFollowTheWelcome(t *testing.T) {
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI)
	cfg := fakeModelConfig(model.URL) + fmt.Sprintf("\n[[mcp.servers]]\nname = \"broken\"\ncommand = %q\n", dir+"/no-such-server")
	p := startTmux(t, dir, cfg, 100, 30)
	s := p.waitFor("broken could not start", "type a message, or /help")
	if w, e := strings.Index(s, "type a message, or /help"), strings.Index(s, "broken could not start"); e < w {
		t.Errorf("the start-up error shows above the welcome line:\n%s", s)
	}
}
