package cli

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/tool"
)

// noteTool is a built-in that writes (so it needs permission) and counts
// its calls.
type noteTool struct {
	mu    sync.Mutex
	calls int
}

func (n *noteTool) Info() tool.Info {
	return tool.Info{Name: "write_note", Description: "test tool write_note",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`),
		Annotations: &mcp.ToolAnnotations{}}
}

func (n *noteTool) Call(context.Context, json.RawMessage) (*tool.Result, error) {
	n.mu.Lock()
	n.calls++
	n.mu.Unlock()
	return &tool.Result{Content: []mcp.Content{&mcp.TextContent{Text: "note written"}}}, nil
}

func (n *noteTool) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.calls
}

// runPolicy sends one message to an agent whose tool write_note needs
// permission, answered by policy, and returns the model server.
func runPolicy(t *testing.T, kind llmtest.Kind, note *noteTool, policy *PromptPolicy, replies ...llmtest.Reply) *llmtest.Server {
	t.Helper()
	srv := llmtest.New(t, kind, replies...)
	set := tool.NewSet(tool.Options{SpillDir: t.TempDir()})
	set.SetBuiltins([]tool.Tool{note})
	ag := agent.New(agent.Options{Provider: srv.Provider(), Model: "test-model", Tools: set, Approver: policy,
		SavePermission: func(workDir, pattern, decision string) error { return nil }})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := ag.Send(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	return srv
}

// The headless policy denies a tool that needs permission, telling the
// model (and the person) the flag that allows it; --allow-tools globs let
// it run.
func TestPromptPolicyWithAnAgent(t *testing.T) {
	t.Parallel()
	for _, kind := range llmtest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			note := &noteTool{}
			srv := runPolicy(t, kind, note, &PromptPolicy{},
				llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "write_note", Args: `{"word":"x"}`}}},
				llmtest.Reply{Text: []string{"could not"}},
			)
			got := srv.Requests()[1].LastToolResults()
			if n := note.count(); n != 0 || len(got) != 1 || !strings.Contains(got[0].Text, "--allow-tools write_note") {
				t.Errorf("ran %d times; result %+v", n, got)
			}
			runPolicy(t, kind, note, &PromptPolicy{AllowTools: []string{"write_*"}},
				llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "write_note", Args: `{"word":"x"}`}}},
				llmtest.Reply{Text: []string{"done"}},
			)
			if n := note.count(); n != 1 {
				t.Errorf("--allow-tools write_*: tool ran %d times, want 1", n)
			}
		})
	}
}

// --allow-tools takes run_command(SPEC) entries as [permissions] does: a
// call runs when each command it chains matches one; a chain with one
// part matching none, and a command that could not be split, are denied.
func TestAllowToolsMatchesCommands(t *testing.T) {
	p := &PromptPolicy{AllowTools: []string{"run_command(git status:*)", "run_command(grep:*)", "mcp__x__*"}}
	for _, tc := range []struct {
		req   ask.Permission
		allow bool
	}{
		{ask.Permission{Tool: "run_command", Commands: []string{"git status", "grep -n x"}}, true},
		{ask.Permission{Tool: "run_command", Commands: []string{"git status", "rm -rf x"}}, false},
		{ask.Permission{Tool: "run_command", Commands: []string{"git status"}, OnceOnly: true}, false},
		{ask.Permission{Tool: "run_command"}, false},
		{ask.Permission{Tool: "other", Commands: []string{"git status"}}, false},
	} {
		d, err := p.ApproveTool(context.Background(), tc.req)
		if got := d == ask.AllowOnce; got != tc.allow {
			t.Errorf("%+v: allowed %v (%v), want %v", tc.req, got, err, tc.allow)
		}
	}
}
