package tui

import (
	"fmt"
	"strings"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/tool"
)

// toolCount is a server's TOOLS cell in /mcp: "N", or "N · M loaded" while
// MCP tools are deferred behind tool_search (M of its N tools are offered).
func (m *model) toolCount(s app.ServerStatus) string {
	if s.State == app.StateIdle {
		return fmt.Sprintf("%d known", s.Tools) // its pins': it has not started
	}
	if !m.offer.Deferring {
		return fmt.Sprint(s.Tools)
	}
	total, loaded := 0, 0
	for _, e := range m.tools {
		if e.Info.Server != s.Name {
			continue
		}
		total++
		if !m.offer.Deferred[e.Name] {
			loaded++
		}
	}
	return fmt.Sprintf("%d · %d loaded", total, loaded)
}

// searchBlock words a finished tool_search call for the transcript: its
// query in place of the arguments, and one line per match (name, server,
// what it does), best first. ok is false for any other call.
func searchBlock(name string, res *tool.Result) (query, body string, ok bool) {
	if name != agent.ToolSearchName || res == nil || res.IsError {
		return "", "", false
	}
	sr, isSearch := res.StructuredContent.(agent.SearchResult)
	if !isSearch {
		return "", "", false
	}
	var b strings.Builder
	for i, m := range sr.Matches {
		fmt.Fprintf(&b, "%d. %s  %s · %s\n", i+1, m.Name, m.Server, m.Description)
	}
	if len(sr.Matches) == 0 {
		b.WriteString("no tool matches\n")
	} else {
		b.WriteString("loaded for the model\n")
	}
	return fmt.Sprintf("%q", sr.Query), b.String(), true
}
