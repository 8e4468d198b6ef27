package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/toolname"
)

// twelveServers are twelve servers shaped like the measurement
// (eleven servers of a tool corpus plus server-everything: 187 tools of
// about 1 KB each, descriptions and parameter schemas as real servers
// write them), in process.
var twelveServers = []struct {
	name  string
	tools int
}{{"github", 26}, {"gitlab", 20}, {"filesystem", 14}, {"everything", 13}, {"git", 12}, {"slack", 10}, {"postgres", 9},
	{"memory", 9}, {"jira", 24}, {"notion", 19}, {"linear", 18}, {"sentry", 13}}

// withTwelve connects the twelve servers to h.
func withTwelve(tb testing.TB, h *harness) {
	for _, s := range twelveServers {
		srv := mcp.NewServer(&mcp.Implementation{Name: s.name, Version: "1.0"}, &mcp.ServerOptions{Instructions: "Tools of " + s.name + "."})
		for i := range s.tools {
			name := fmt.Sprintf("%s_action_%d", s.name, i)
			desc := fmt.Sprintf("Performs action %d on %s: finds the records that match the given filters, applies the change described by the arguments, "+
				"and returns the affected records as JSON with their ids, titles, owners, timestamps and links. Use it when the user asks about %s "+
				"items; prefer narrow filters, since large result sets are paginated and cost tokens. Errors name the field that was wrong. %s",
				i, s.name, s.name, strings.Repeat("Pagination follows the cursor in the response. ", 6))
			type in struct {
				Query  string `json:"query" jsonschema:"What to look for, in the service's search syntax (field:value pairs, quoted phrases)"`
				Owner  string `json:"owner,omitempty" jsonschema:"The owner or workspace the records belong to; default: the authenticated user's"`
				Limit  int    `json:"limit,omitempty" jsonschema:"How many records to return, 1 to 100 (default 20)"`
				Cursor string `json:"cursor,omitempty" jsonschema:"The cursor of the next page, from a previous response"`
			}
			mcp.AddTool(srv, &mcp.Tool{Name: name, Description: desc, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " done"}}}, nil, nil
			})
		}
		h.set.SetServerTools(s.name, connectServer(tb, s.name, srv, nil))
	}
}

// millionWindow is a fake Anthropic model with a 1M window.
func millionWindow(mode string) func(*agent.Options) {
	return func(o *agent.Options) {
		o.Facts = func(p, m string) llm.ModelFacts {
			f := llm.Facts(llm.Configured{}, "claude-sonnet-4-6")
			f.Model = m
			return f
		}
		o.ToolSearch = agent.ToolSearch{Mode: mode}
	}
}

// firstRequestBytes is the size of the JSON body of the first request.
func firstRequestBytes(h *harness) int {
	raw, _ := json.Marshal(h.srv.Requests()[0].Body)
	return len(raw)
}

// Twelve servers against a 1M-window model: the first request stays under
// 30 KB (their tools deferred, whatever the window), and tool_search finds
// a tool that is then called.
func TestTwelveServersFirstRequestIsSmall(t *testing.T) {
	t.Parallel()
	target := toolname.Qualified("sentry", "sentry_action_3")
	h := newHarness(t, llmtest.Anthropic, setup{opts: millionWindow(config.ToolSearchAuto)},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "s", Name: agent.ToolSearchName, Args: `{"query":"sentry action 3"}`}}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "c", Name: target, Args: `{"query":"is:open"}`}}},
		llmtest.Reply{Text: []string{"Done."}})
	withTwelve(t, h)
	if err := h.send(t, "Run sentry's action 3 on the open issues."); err != nil {
		t.Fatal(err)
	}
	if n := firstRequestBytes(h); n > 30_000 {
		t.Errorf("first request: %d bytes, want ≤ 30,000", n)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 3 || !containsTool(reqs[1].Tools, target) {
		t.Fatalf("%d requests; second offers %v, want %s loaded by tool_search", len(reqs), reqs[len(reqs)-1].Tools, target)
	}
	if res := reqs[2].LastToolResults(); len(res) != 1 || res[0].IsError || !strings.Contains(res[0].Text, "done") {
		t.Errorf("the found tool's result: %+v", res)
	}
}

// BenchmarkToolsRequestBytes12 prints the size of the first request with
// the twelve servers connected and a 1M-window model: otter's default
// against offering every tool (tool_search = "never"); target ≤ 0.2.
//
//	tools-request-bytes-12: otter=… baseline=… ratio=…
func BenchmarkToolsRequestBytes12(b *testing.B) {
	bytesOf := func(mode string) int {
		n := 0
		for range b.N {
			h := newHarness(b, llmtest.Anthropic, setup{opts: millionWindow(mode)}, llmtest.Reply{Text: []string{"hi"}})
			withTwelve(b, h)
			if err := h.agent.Send(context.Background(), "hi"); err != nil {
				b.Fatal(err)
			}
			n = firstRequestBytes(h)
		}
		return n
	}
	otter, baseline := bytesOf(config.ToolSearchAuto), bytesOf(config.ToolSearchNever)
	ratio := float64(otter) / float64(baseline)
	b.ReportMetric(float64(otter), "otter-bytes")
	b.ReportMetric(ratio, "ratio")
	tools := 0
	for _, s := range twelveServers {
		tools += s.tools
	}
	fmt.Printf("tools-request-bytes-12: otter=%dB baseline=%dB ratio=%.3f (first request, %d MCP tools of 12 servers, 1M window; target ≤ 0.2, otter ≤ 30 KB)\n", otter, baseline, ratio, tools)
}
