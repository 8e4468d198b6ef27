package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/tool"
)

// shellTool is a gated built-in that "runs" a command: it splits it on
// ";" (the real one parses it as bash does), and words the rule a session
// answer allows from each part's first word. A command with "`" cannot be
// split.
type shellTool struct {
	fakeTool
	ran []string
}

func newShellTool() *shellTool {
	s := &shellTool{fakeTool: fakeTool{name: "run_command", group: "command",
		schema: `{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`}}
	s.call = func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
		var in struct{ Command string }
		_ = json.Unmarshal(args, &in)
		s.ran = append(s.ran, in.Command)
		return tool.TextResult("ran " + in.Command), nil
	}
	return s
}

func (s *shellTool) Gate(_ context.Context, args json.RawMessage) tool.Gate {
	var in struct{ Command string }
	_ = json.Unmarshal(args, &in)
	g := tool.Gate{Ask: true, Reason: "it runs a command", Diff: "--- a\n+++ b\n"}
	if strings.Contains(in.Command, "`") {
		g.Unsplit = "a backquote"
		return g
	}
	for _, part := range strings.Split(in.Command, ";") {
		part = strings.TrimSpace(part)
		g.Commands = append(g.Commands, part)
		g.Rules = append(g.Rules, fmt.Sprintf("run_command(%s:*)", strings.Fields(part)[0]))
	}
	return g
}

// [permissions] rules of the form run_command(PREFIX:*) match each command
// of a chain: the chain runs without a question only when every part is
// allowed, one denied part refuses it, and one part no rule allows asks
// (with the parts and the rules an answer for the session would add). An
// answer for the session allows those prefixes, not the tool; a command
// that cannot be split is allowed once only.
func TestCommandRulesMatchEveryPartOfAChain(t *testing.T) {
	call := func(id, cmd string) llmtest.Reply {
		return llmtest.Reply{Calls: []llmtest.Call{{ID: id, Name: "run_command", Args: fmt.Sprintf(`{"command":%q}`, cmd)}}}
	}
	for _, tc := range []struct {
		name      string
		rules     map[string]string
		decisions []ask.PermissionDecision
		commands  []string // one call each, in order
		ran       []string
		asked     int
	}{
		{name: "every part allowed", rules: map[string]string{"run_command(git status:*)": "allow", "run_command(grep:*)": "allow"},
			commands: []string{"git status --short; grep x"}, ran: []string{"git status --short; grep x"}},
		{name: "one part not allowed asks", rules: map[string]string{"run_command(git status:*)": "allow"},
			commands: []string{"git status; rm -rf x"}, asked: 1},
		{name: "a prefix is whole words", rules: map[string]string{"run_command(git status:*)": "allow"},
			commands: []string{"git statusx"}, asked: 1},
		{name: "one part denied refuses without asking", rules: map[string]string{"run_command": "allow", "run_command(rm:*)": "deny"},
			commands: []string{"ls; rm -rf x"}},
		{name: "the session allows the prefixes answered", decisions: []ask.PermissionDecision{ask.AllowSession},
			commands: []string{"make test; git diff", "make lint", "curl x"}, ran: []string{"make test; git diff", "make lint"}, asked: 2},
		{name: "an unsplit command is allowed once", decisions: []ask.PermissionDecision{ask.AllowSession},
			commands: []string{"echo `id`", "echo `id`"}, ran: []string{"echo `id`"}, asked: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var replies []llmtest.Reply
			for i, c := range tc.commands {
				replies = append(replies, call(fmt.Sprintf("c%d", i), c))
			}
			replies = append(replies, llmtest.Reply{Text: []string{"done"}})
			sh := newShellTool()
			h := newHarness(t, llmtest.OpenAI, setup{builtins: []tool.Tool{sh}, opts: func(o *agent.Options) { o.Permissions = tc.rules }}, replies...)
			h.approver.decisions = tc.decisions
			if err := h.send(t, "go"); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sh.ran, tc.ran) {
				t.Errorf("ran %q, want %q", sh.ran, tc.ran)
			}
			asked := h.approver.prompts()
			if len(asked) != tc.asked {
				t.Fatalf("asked %d times, want %d: %+v", len(asked), tc.asked, asked)
			}
			for _, q := range asked {
				if q.Diff == "" || (q.Commands == nil) != q.OnceOnly {
					t.Errorf("the question lacks the call's diff or commands: %+v", q)
				}
			}
			if tc.name == "the session allows the prefixes answered" {
				if got := asked[0].Rules; !slices.Equal(got, []string{"run_command(make:*)", "run_command(git:*)"}) {
					t.Errorf("the rules an answer for the session adds: %q", got)
				}
			}
		})
	}
}
