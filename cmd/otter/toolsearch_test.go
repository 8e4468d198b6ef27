package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
	"github.com/otter-sh/otter/internal/toolname"
)

// manyToolServer serves n tools with awkward names over streamable HTTP,
// as the 2,000-tool test server of internal/mcphost does.
func manyToolServer(t *testing.T, n int) string {
	t.Helper()
	server := sdk.NewServer(&sdk.Implementation{Name: "many", Version: "1.0.0"}, nil)
	for _, name := range testpeer.AwkwardToolNames(n) {
		server.AddTool(&sdk.Tool{Name: name, Description: "awkward", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name}}}, nil
			})
	}
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// manyServersConfig configures the reference server and the many-tool
// server at manyURL, with srv as the model.
func manyServersConfig(t *testing.T, srv *llmtest.Server, manyURL string) string {
	return promptConfig(t, srv, testpeer.Require(t).EverythingConfig()+fmt.Sprintf(`
[[mcp.servers]]
name = "many"
url = %q
`, manyURL))
}

// TestPromptFindsADeferredTool is the "done when": with a
// 2,000-tool server and the reference server configured, `otter -p` offers
// at most 128 tools (the OpenAI peer refuses more, as the API does); the
// model's tool_search("add two numbers") finds get-sum among the first
// five; the next request offers it; the model's call runs and the answer
// arrives. The same with the Anthropic peer, which has no cap but whose
// model's budget the 2,000 definitions pass.
func TestPromptFindsADeferredTool(t *testing.T) {
	many := manyToolServer(t, 2000)
	getSum := toolname.Qualified("everything", "get-sum")
	for _, kind := range llmtest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			configTestHome(t)
			srv := llmtest.New(t, kind,
				llmtest.Reply{Calls: []llmtest.Call{{ID: "call_search", Name: agent.ToolSearchName, Args: `{"query":"add two numbers"}`}}},
				llmtest.Reply{Calls: []llmtest.Call{{ID: "call_sum", Name: getSum, Args: `{"a":2,"b":3}`}}},
				llmtest.Reply{Text: []string{"2 + 3 = 5."}},
			)
			cfg := manyServersConfig(t, srv, many)
			stdout, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", cfg, "-p", "What is 2+3?")
			if err != nil {
				t.Fatalf("otter -p: %v\nstderr:\n%s", err, stderr)
			}
			if stdout != "2 + 3 = 5.\n" {
				t.Errorf("stdout = %q", stdout)
			}
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("model got %d requests, want 3", len(reqs))
			}
			first := reqs[0].Tools
			if len(first) > 128 || !slices.Contains(first, agent.ToolSearchName) || !slices.Contains(first, "scrape_page") || slices.Contains(first, getSum) {
				t.Errorf("first request offers %d tools; want ≤ 128 with tool_search and the built-ins, without %s: %v", len(first), getSum, first)
			}
			if !strings.Contains(reqs[0].System, "- many: 2000 tools") || !strings.Contains(reqs[0].System, "- everything: ") {
				t.Errorf("the system prompt does not name the servers:\n%s", reqs[0].System)
			}
			res := reqs[1].LastToolResults()
			if len(res) != 1 || res[0].IsError {
				t.Fatalf("tool_search result = %+v", res)
			}
			t.Logf("offered %d tools first; tool_search answered:\n%s", len(first), res[0].Text)
			lines := strings.Split(res[0].Text, "\n")
			var top []string
			for _, l := range lines[:min(5, len(lines))] {
				top = append(top, strings.Fields(l + " ")[0])
			}
			if !slices.Contains(top, getSum) {
				t.Errorf("tool_search(add two numbers) gave %v first, want %s among them:\n%s", top, getSum, res[0].Text)
			}
			if !slices.Contains(reqs[1].Tools, getSum) || len(reqs[1].Tools) > 128 {
				t.Errorf("second request offers %d tools without %s", len(reqs[1].Tools), getSum)
			}
			if res := reqs[2].LastToolResults(); len(res) != 1 || res[0].IsError || !strings.Contains(res[0].Text, "5") {
				t.Errorf("get-sum's result = %+v", res)
			}
			if !strings.Contains(stderr, "✓ "+getSum) {
				t.Errorf("stderr does not show the call:\n%s", stderr)
			}

			// otter mcp tools --search ranks exactly as the model's tool did.
			out, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", cfg, "mcp", "tools", "--search", "add two numbers", "--json")
			if err != nil {
				t.Fatalf("mcp tools --search: %v\n%s", err, stderr)
			}
			var found []struct {
				Name, Server, Tool string
				Score              float64
				InputSchema        json.RawMessage `json:"input_schema"`
			}
			if err := json.Unmarshal([]byte(out), &found); err != nil {
				t.Fatalf("--json output %q: %v", out, err)
			}
			var names []string
			for i, f := range found {
				names = append(names, f.Name)
				if f.Score <= 0 || (i > 0 && f.Score > found[i-1].Score) || len(f.InputSchema) == 0 || f.Server == "" || f.Tool == "" {
					t.Errorf("match %d = %+v: want the usual tool object, best first, with a score", i, f)
				}
			}
			if !slices.Equal(names, top) {
				t.Errorf("mcp tools --search gives %v, the model's tool_search gave %v", names, top)
			}
		})
	}
}

// --search in text, with --limit and a server, and its usage errors.
func TestMCPToolsSearch(t *testing.T) {
	configTestHome(t)
	srv := llmtest.New(t, llmtest.OpenAI)
	cfg := manyServersConfig(t, srv, manyToolServer(t, 200))
	out, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", cfg, "mcp", "tools", "--search", "echo my message back", "--limit", "2")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.HasPrefix(out, "1. mcp__everything__echo  (server everything, tool echo)  score ") || !strings.Contains(out, "    Echoes back the input string\n") || !strings.Contains(out, "\n2. ") || strings.Contains(out, "\n3. ") {
		t.Errorf("--search --limit 2 printed:\n%s", out)
	}
	out, _, err = otterWithStdin(t, strings.NewReader(""), "--config", cfg, "mcp", "tools", "many", "--search", "echo my message back")
	if err != nil || out != "no tool matches: try other words, or the name of a server\n" {
		t.Errorf("--search in server many: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"--limit", "3"}, {"--search", "sum", "--limit", "-1"}, {"--search", "  "}} {
		_, _, err := otterWithStdin(t, strings.NewReader(""), append([]string{"--config", cfg, "mcp", "tools"}, args...)...)
		wantExit(t, err, 2)
		if !strings.Contains(err.Error(), "--") {
			t.Errorf("%v: the error %q does not say which flag", args, err)
		}
	}
}

// Issue 35: with the everything and filesystem servers, `otter mcp tools
// --search "read file contents"` ranked get_file_info first and the tools
// that read a file 6th and 7th; now both are among the first three.
func TestMCPToolsSearchReadsAFile(t *testing.T) {
	configTestHome(t)
	node, refs := testpeer.ReferenceServers(t, t.TempDir())
	cfg := ""
	for _, r := range refs {
		if r.Name == "everything" || r.Name == "filesystem" {
			cfg += fmt.Sprintf("[[mcp.servers]]\nname = %q\ncommand = %q\nargs = %s\nroots = []\n\n", r.Name, node, tomlStrings(r.Args))
		}
	}
	cfgFile := filepath.Join(t.TempDir(), "otter.toml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runOtter(t, "--config", cfgFile, "mcp", "tools", "--search", "read file contents", "--limit", "3")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, name := range []string{"read_text_file", "read_file"} {
		if !strings.Contains(out, "(server filesystem, tool "+name+")") {
			t.Errorf("--search %q --limit 3 does not list %s:\n%s", "read file contents", name, out)
		}
	}
}

// tomlStrings is ss as a TOML array of strings.
func tomlStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
