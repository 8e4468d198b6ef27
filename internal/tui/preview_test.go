package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/tool"
)

// A built-in tool's result previews its data, not the envelope's id,
// tool and timestamp; ctrl+o shows the whole envelope.
func TestBuiltinResultPreviewsItsData(t *testing.T) {
	t.Parallel()
	envelope := `{
  "id": "01JABCDEF",
  "tool": "scrape_page",
  "timestamp": "2026-11-25T12:00:00Z",
  "duration_ms": 812,
  "status": "success",
  "result": {
    "title": "Example Domain",
    "price": "19.99"
  },
  "metadata": {"request_id": "r1"},
  "errors": []
}`
	// The model calls a tool that answers with the built-ins' envelope
	// (webdata's: id, tool, timestamp … result); it is read-only, so no
	// permission prompt comes first.
	b := &fakeHost{
		tools: []tool.Entry{entry("web", "scrape_page", "Scrape a page", `{}`, &sdk.ToolAnnotations{ReadOnlyHint: true})},
		replies: []llmtest.Reply{
			{Calls: []llmtest.Call{{ID: "1", Name: "mcp__web__scrape_page", Args: `{"url":"https://example.com"}`}}},
			{Text: []string{"done"}},
		},
		call: func(context.Context, string, json.RawMessage) (*tool.Result, error) {
			return tool.TextResult(envelope), nil
		},
	}
	h := start(t, b)
	h.enterLine("scrape it")
	s := h.waitFor("scrape_page", `"title": "Example Domain"`, `"price": "19.99"`)
	if strings.Contains(s, `"timestamp"`) || strings.Contains(s, `"id": "01JABCDEF"`) {
		t.Errorf("the preview shows the envelope's boilerplate:\n%s", s)
	}
	h.press("ctrl+o")
	h.waitFor(`"timestamp": "2026-11-25T12:00:00Z"`, `"request_id": "r1"`)
	if !b.did(`call mcp__web__scrape_page {"url":"https://example.com"}`) {
		t.Errorf("the tool was not called with the model's arguments: %v", b.actions)
	}
}

// /image N past the only image says there is one, not "images 1 to 1".
func TestImageOutOfRangeWithOneImage(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, &fakeHost{}, Options{})
	m.shown = []*toolImage{{}}
	m.command("/image 3")
	s := ansi.Strip(m.render())
	if !strings.Contains(s, "no image 3: this conversation has one image: /image 1") || strings.Contains(s, "1 to 1") {
		t.Errorf("the notice is not about the one image:\n%s", s)
	}
}

// /mcp tools shows names and descriptions in columns.
func TestMCPToolsInColumns(t *testing.T) {
	t.Parallel()
	b := &fakeHost{tools: []tool.Entry{
		entry("everything", "echo", "Echoes back the input", `{}`, nil),
		entry("everything", "get-resource-reference", "Returns a resource reference", `{}`, nil),
	}}
	h := start(t, b)
	h.enterLine("/mcp tools")
	s := h.waitFor("Echoes back the input", "Returns a resource reference")
	col := func(text string) int {
		for _, l := range strings.Split(s, "\n") {
			if i := strings.Index(l, text); i >= 0 {
				return len([]rune(l[:i]))
			}
		}
		return -1
	}
	if a, b := col("Echoes back"), col("Returns a resource"); a != b {
		t.Errorf("descriptions start at columns %d and %d, want one column:\n%s", a, b, s)
	}
}
