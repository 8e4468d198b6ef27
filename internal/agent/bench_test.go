package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
	"github.com/otter-sh/otter/internal/tool"
)

// awkwardServer is the 2,000-tool test server's tools, in process.
func awkwardServer(tb testing.TB, n int) []tool.Tool {
	srv := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1.0"}, nil)
	for _, name := range testpeer.AwkwardToolNames(n) {
		srv.AddTool(&mcp.Tool{Name: name, Description: "awkward", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
			})
	}
	return connectServer(tb, "many", srv, nil)
}

// BenchmarkToolsRequestBytes2000 prints the bytes of tool definitions in
// the first request with the 2,000-tool server (and calc) connected:
// otter's default (deferred behind tool_search) against offering every
// tool, as tool_search = "never" does (target ratio ≤ 0.05).
//
//	tools-request-bytes-2000: otter=… baseline=… ratio=…
func BenchmarkToolsRequestBytes2000(b *testing.B) {
	bytesOf := func(mode string) int {
		h := newHarness(b, llmtest.Anthropic, setup{opts: toolSearchOpts(agent.ToolSearch{Mode: mode})})
		h.set.SetServerTools("many", awkwardServer(b, 2000))
		total := 0
		for range b.N {
			h.srv.Push(llmtest.Reply{Text: []string{"hi"}})
			if err := h.agent.Send(context.Background(), "hi"); err != nil {
				b.Fatal(err)
			}
			reqs := h.srv.Requests()
			raw, _ := json.Marshal(reqs[len(reqs)-1].Body["tools"])
			total = len(raw)
			h.agent.Reset()
		}
		return total
	}
	otter := bytesOf(agent.ToolSearchAuto)
	baseline := bytesOf(agent.ToolSearchNever)
	ratio := float64(otter) / float64(baseline)
	b.ReportMetric(float64(otter), "otter-bytes")
	b.ReportMetric(ratio, "ratio")
	fmt.Printf("tools-request-bytes-2000: otter=%dB baseline=%dB ratio=%.4f (tool definitions in the first request, 2,003 MCP tools; target ≤ 0.05)\n", otter, baseline, ratio)
}
