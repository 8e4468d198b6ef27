package tool

import (
	"encoding/json"
	"testing"
)

func describedTool(server, name, desc string) *fakeTool {
	return &fakeTool{info: Info{Name: name, Server: server, Description: desc, InputSchema: json.RawMessage(`{"type":"object"}`)}}
}

// Search ranks MCP tools only, and sees a server's new tool list and
// instructions at once.
func TestSearchFollowsTheToolLists(t *testing.T) {
	t.Parallel()
	s := NewSet(Options{})
	s.SetBuiltins([]Tool{describedTool("", "scrape_page", "Fetch a web page")})
	s.SetServerTools("calc", []Tool{describedTool("calc", "sum", "Add two numbers"), describedTool("calc", "echo", "Echo text back")})
	if m := s.Search("add numbers", 5, nil); len(m) != 1 || m[0].Name != "mcp__calc__sum" || m[0].Score <= 0 {
		t.Fatalf("Search = %+v", m)
	}
	if m := s.Search("fetch a web page", 5, nil); len(m) != 0 {
		t.Errorf("Search found built-ins: %+v", m)
	}
	s.SetServerTools("web", []Tool{describedTool("web", "fetch", "Fetch a web page")})
	if m := s.Search("fetch a web page", 5, nil); len(m) != 1 || m[0].Name != "mcp__web__fetch" {
		t.Errorf("a new server's tool is not found: %+v", m)
	}
	s.SetServerTools("calc", nil)
	if m := s.Search("add numbers", 5, nil); len(m) != 0 {
		t.Errorf("a removed server's tool is found: %+v", m)
	}
	if m := s.Search("browser", 5, map[string]string{"web": "A headless browser."}); len(m) != 1 || m[0].Name != "mcp__web__fetch" {
		t.Errorf("the server's instructions are not searched: %+v", m)
	}
}
