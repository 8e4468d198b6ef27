package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
	"github.com/otter-sh/otter/internal/toolname"
)

// envMarkServer makes the test binary a stdio MCP server whose tool mark
// appends its text to the file the variable names: what the tool saw.
const envMarkServer = "OTTER_MARKTEST_FILE"

// markServerTOML configures the mark server (the test binary), its tool
// writing to saw.
func markServerTOML(t *testing.T, saw string) string {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("[[mcp.servers]]\nname = \"mark\"\ncommand = %q\nenv = { %s = %q }\n", self, envMarkServer, saw)
}

// markCalled checks that the fake model, having asked for mark once, got
// the second request, and returns the call's result and what the tool saw.
func markCalled(t *testing.T, srv *llmtest.Server, saw, stderr string) (res []llmtest.ToolResult, data string) {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2\n%.2000s", len(reqs), stderr)
	}
	b, _ := os.ReadFile(saw)
	return reqs[1].LastToolResults(), string(b)
}

func runMarkTestServer() int {
	file := os.Getenv(envMarkServer)
	s := sdk.NewServer(&sdk.Implementation{Name: "mark", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "mark"}, func(_ context.Context, _ *sdk.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*sdk.CallToolResult, any, error) {
		f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		fmt.Fprintln(f, in.Text)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "marked " + in.Text}}}, nil, nil
	})
	_ = s.Run(context.Background(), &sdk.StdioTransport{})
	return 0
}

// TestHookAllowDoesNotBeatADenyRule: a PreToolUse hook that answers
// permissionDecision "allow", or the older decision "approve", for a tool a
// [permissions] deny rule forbids does not make the tool run (the real
// binary, otter -p, the fake model calling the tool); the model is told the
// configuration denies it. With no deny rule the same hook runs the tool
// without asking (nobody could be asked in -p), so the hook is heard.
func TestHookAllowDoesNotBeatADenyRule(t *testing.T) {
	t.Parallel()
	bin := testpeer.Otter(t)
	mark := toolname.Qualified("mark", "mark")
	for _, tc := range []struct{ name, answer, rule string }{
		{"permissionDecision allow", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`, "deny"},
		{"decision approve", `{"decision":"approve"}`, "deny"},
		{"allow without a rule", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home, env := otterHome(t)
			// Beside the home, not in it: the mark server runs sandboxed,
			// and the home holds otter's own folders, which it may not
			// touch (a folder holding them is not writable as a whole).
			saw := filepath.Join(t.TempDir(), "saw.txt")
			hook := filepath.Join(home, "allow.sh")
			putFile(t, hook, "#!/bin/bash\ncat >/dev/null\necho '"+tc.answer+"'\n", 0o755)
			rule := ""
			if tc.rule != "" {
				rule = fmt.Sprintf("[permissions]\n%q = %q\n", mark, tc.rule)
			}
			srv := llmtest.New(t, llmtest.Anthropic,
				llmtest.Reply{Calls: []llmtest.Call{{ID: "m1", Name: mark, Args: `{"text":"ran"}`}}},
				llmtest.Reply{Text: []string{"done"}},
			)
			cfg := promptConfig(t, srv, fmt.Sprintf(`%s
%s
[[hooks.PreToolUse]]
matcher = "mcp__mark__.*"
[[hooks.PreToolUse.hooks]]
type = "command"
command = %q
`, rule, markServerTOML(t, saw), hook))
			_, stderr, err := runIn(bin, home, env, "--config", cfg, "-p", "mark it")
			if err != nil {
				t.Fatalf("otter -p: %v\n%s", err, stderr)
			}
			res, data := markCalled(t, srv, saw, stderr)
			if tc.rule == "deny" {
				if data != "" {
					t.Errorf("the tool ran despite the deny rule; it saw %q", data)
				}
				if len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].Text, "denied by the [permissions] configuration") {
					t.Errorf("the model's result %+v, want the deny rule's refusal", res)
				}
				return
			}
			if data != "ran\n" || len(res) != 1 || res[0].IsError {
				t.Errorf("with no rule the hook's allow should run the tool unasked: it saw %q, result %+v\n%s", data, res, stderr)
			}
		})
	}
}
