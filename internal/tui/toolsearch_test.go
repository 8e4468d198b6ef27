//go:build seamwip

package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
)

// While tools are deferred, /mcp says how many of each server's tools are
// loaded, /mcp tools marks the deferred ones, and a tool_search call shows
// its query and every match.
func TestDeferredToolsAreShown(t *testing.T) {
	b := &fakeHost{
		servers: []servers.Status{{Name: "alpha", Transport: "stdio", State: servers.StateConnected, Tools: 3}},
		tools:   []tool.Entry{entry("alpha", "a1", "", `{}`, nil), entry("alpha", "a2", "", `{}`, nil), entry("alpha", "a3", "", `{}`, nil)},
		offer:   agent.ToolOffer{Deferring: true, Deferred: map[string]bool{"mcp__alpha__a2": true, "mcp__alpha__a3": true}},
		send: func(ctx context.Context, text string, emit func(agent.Event)) error {
			emit(agent.ToolCallStarted{ID: "s1", Name: agent.ToolSearchName, Args: json.RawMessage(`{"query":"add two numbers"}`)})
			matches := []agent.SearchMatch{
				{Name: "mcp__calc__sum", Server: "calc", Description: "Returns the sum of two numbers"},
				{Name: "mcp__calc__mul", Server: "calc", Description: "Multiplies"},
				{Name: "mcp__calc__div", Server: "calc", Description: "Divides"},
				{Name: "mcp__calc__sub", Server: "calc", Description: "Subtracts"},
				{Name: "mcp__calc__mod", Server: "calc", Description: "Remainder"},
			}
			emit(agent.ToolCallFinished{ID: "s1", Name: agent.ToolSearchName, Result: &tool.Result{
				Content:           []mcp.Content{&mcp.TextContent{Text: "…"}},
				StructuredContent: agent.SearchResult{Query: "add two numbers", Matches: matches}}})
			emit(agent.TurnFinished{Text: "found it"})
			return nil
		},
	}
	h := start(t, b)
	h.waitFor("/help")
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
}
