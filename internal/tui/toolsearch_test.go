package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
)

// While tools are deferred, /mcp says how many of each server's tools are
// loaded, /mcp tools marks the deferred ones, and a tool_search call shows
// its query and every match.
//
// The agent defers the MCP tools because their definitions pass its
// budget (at most agent.DefaultToolBudget tokens): bulk's one tool says far
// too much. The model loads alpha's a1 by calling it by name, then
// searches; the matches are what the real search ranks over calc's tools.
func TestDeferredToolsAreShown(t *testing.T) {
	t.Parallel()
	tools := []tool.Entry{
		entry("alpha", "a1", "", `{}`, nil), entry("alpha", "a2", "", `{}`, nil), entry("alpha", "a3", "", `{}`, nil),
		entry("calc", "sum", "Returns the sum of two numbers", `{}`, nil),
		entry("calc", "mul", "Multiplies two numbers", `{}`, nil),
		entry("calc", "div", "Divides two numbers", `{}`, nil),
		entry("calc", "sub", "Subtracts two numbers", `{}`, nil),
		entry("calc", "mod", "Remainder of a division of two numbers", `{}`, nil),
		entry("bulk", "everything", strings.Repeat("filler ", 6000), `{}`, nil),
	}
	b := &fakeHost{
		servers: []servers.Status{
			{Name: "alpha", Transport: "stdio", State: servers.StateConnected, Tools: 3},
			{Name: "calc", Transport: "stdio", State: servers.StateConnected, Tools: 5},
			{Name: "bulk", Transport: "stdio", State: servers.StateConnected, Tools: 1},
		},
		replies: []llmtest.Reply{
			{Calls: []llmtest.Call{{ID: "c1", Name: "mcp__alpha__a1", Args: "{}"}}},
			{Text: []string{"used a1"}},
			{Calls: []llmtest.Call{{ID: "s1", Name: agent.ToolSearchName, Args: `{"query":"add two numbers"}`}}},
			{Text: []string{"found it"}},
		},
	}
	b.tools = tools
	h := start(t, b)
	h.waitFor("/help")
	// A deferred tool called by its exact name runs (a1 is not read-only:
	// allowed once) and is loaded from then on.
	h.enterLine("use a1")
	h.waitFor("Allow mcp__alpha__a1?")
	h.press("enter")
	h.waitFor("used a1")
	h.waitGone("working")
	h.enterLine("/mcp")
	h.waitFor("MCP servers", "3 · 1 loaded")
	h.press("esc")
	h.enterLine("/mcp tools")
	s := h.waitFor("mcp__alpha__a3")
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "mcp__alpha__a1") == strings.Contains(l, "(deferred)") && strings.Contains(l, "mcp__alpha__a") {
			t.Errorf("a1 is loaded, a2 and a3 deferred; the list says:\n%s", l)
		}
	}
	h.press("esc")
	h.enterLine("add two numbers")
	h.waitFor(`tool_search "add two numbers"`, "1. mcp__calc__sum  calc · Returns the sum of two numbers", "5. mcp__calc__mod  calc · Remainder", "found it")
	reqs := b.model.Requests()
	if first := reqs[0].Tools; !slices.Contains(first, agent.ToolSearchName) || slices.Contains(first, "mcp__alpha__a1") {
		t.Errorf("the first request offers %v: want tool_search, the MCP tools deferred", first)
	}
	// What the block shows is what the model was sent.
	if res := reqs[len(reqs)-1].LastToolResults(); len(res) != 1 || !strings.HasPrefix(res[0].Text, "mcp__calc__sum (server calc): Returns the sum of two numbers\n") {
		t.Errorf("the model got the search result %+v", res)
	}
}
