package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/hooks"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/toolname"
)

// hookRunner compiles cfg and returns a runner that runs it in dir.
func hookRunner(t *testing.T, dir string, cfg hooks.Config) agent.HookRunner {
	t.Helper()
	set, err := hooks.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, ev hooks.Event, in hooks.Input) hooks.Outcome {
		in.SessionID, in.CWD = "test-session", dir
		return set.Run(ctx, ev, in, hooks.Env{ProjectDir: dir})
	}
}

func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// A PreToolUse hook that exits 2 keeps the call from reaching the tool, and
// the model reads the hook's stderr as the call's result; a PostToolUse
// hook sees each call that ran, with its input and response.
func TestHooksGateAndLogToolCalls(t *testing.T) {
	dir := t.TempDir()
	guard := writeScript(t, dir, "guard.sh", `input=$(cat); echo "add is off limits today" >&2; exit 2`)
	logf := filepath.Join(dir, "calls.jsonl")
	logger := writeScript(t, dir, "log.sh", `cat >> `+logf+`; echo >> `+logf)
	add := toolname.Qualified("calc", "add")
	h := newHarness(t, llmtest.Anthropic, setup{opts: func(o *agent.Options) {
		o.Hooks = hookRunner(t, dir, hooks.Config{
			hooks.PreToolUse:  {{Matcher: "mcp__calc__.*", Hooks: []hooks.Command{{Command: guard}}}},
			hooks.PostToolUse: {{Hooks: []hooks.Command{{Command: logger}}}},
		})
	}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: add, Args: `{"a":2,"b":3}`}, {ID: "c2", Name: "lookup_word", Args: `{"word":"otter"}`}}},
		llmtest.Reply{Text: []string{"done"}},
	)
	if err := h.send(t, "go"); err != nil {
		t.Fatal(err)
	}
	results := h.srv.Requests()[1].LastToolResults()
	if len(results) != 2 || !results[0].IsError || !strings.Contains(results[0].Text, "add is off limits today") {
		t.Fatalf("the blocked call's result should carry the hook's stderr: %+v", results)
	}
	if results[1].IsError || results[1].Text != "otter: a definition" {
		t.Fatalf("lookup_word should run: %+v", results[1])
	}
	data, err := os.ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"tool_name":"lookup_word"`) || !strings.Contains(lines[0], `"tool_response":{"content":[{"type":"text","text":"otter: a definition"}]}`) {
		t.Fatalf("PostToolUse log: %q", data)
	}
}

// A Stop hook that blocks makes the agent go on exactly once.
func TestStopHookForcesOneMoreTurn(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "stops")
	stop := writeScript(t, dir, "stop.sh", `jq -r .stop_hook_active >> `+count+`; echo "also check the units" >&2; exit 2`)
	h := newHarness(t, llmtest.OpenAI, setup{opts: func(o *agent.Options) {
		o.Hooks = hookRunner(t, dir, hooks.Config{hooks.Stop: {{Hooks: []hooks.Command{{Command: stop}}}}})
	}},
		llmtest.Reply{Text: []string{"5"}},
		llmtest.Reply{Text: []string{"5 apples"}},
	)
	if err := h.send(t, "2+3?"); err != nil {
		t.Fatal(err)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("want exactly one more turn, got %d requests", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if !strings.Contains(last.Text, "also check the units") {
		t.Fatalf("the second request should carry the hook's reason: %+v", last)
	}
	if f := h.finished(t); f.Text != "5 apples" {
		t.Fatalf("final %q", f.Text)
	}
	data, _ := os.ReadFile(count)
	if string(data) != "false\ntrue\n" {
		t.Fatalf("stop_hook_active seen by the hook: %q", data)
	}
}

// A custom command's model and allowed-tools hold for its own message only.
func TestNextTurnOptions(t *testing.T) {
	calls := 0
	h := newHarness(t, llmtest.OpenAI, setup{builtins: []tool.Tool{writeNote(&calls)}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "w1", Name: "write_note", Args: `{"word":"a"}`}}},
		llmtest.Reply{Text: []string{"written"}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "w2", Name: "write_note", Args: `{"word":"b"}`}}},
		llmtest.Reply{Text: []string{"not written"}},
	)
	h.agent.SetNextTurn(agent.TurnOptions{Model: "command-model", Allow: func(name string) bool { return name == "write_note" }})
	if err := h.send(t, "/note a"); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || len(h.approver.prompts()) != 0 {
		t.Fatalf("allowed-tools: %d calls, %d prompts", calls, len(h.approver.prompts()))
	}
	if err := h.send(t, "another"); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || len(h.approver.prompts()) != 1 {
		t.Fatalf("the next message must ask again: %d calls, %d prompts", calls, len(h.approver.prompts()))
	}
	reqs := h.srv.Requests()
	if reqs[0].Model != "command-model" || reqs[1].Model != "command-model" || reqs[2].Model != "test-model" {
		t.Fatalf("models %q %q %q", reqs[0].Model, reqs[1].Model, reqs[2].Model)
	}
}

// A PreToolUse hook's "allow" (or the older "approve") only skips the
// question: a [permissions] deny rule still refuses the call, and the tool
// never runs; under an "ask" rule the same hook runs it without asking.
func TestHookAllowDoesNotBeatADenyRule(t *testing.T) {
	for _, answer := range []string{
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`,
		`{"decision":"approve"}`,
	} {
		for _, rule := range []string{"deny", "ask"} {
			t.Run(rule+" "+answer, func(t *testing.T) {
				dir := t.TempDir()
				allow := writeScript(t, dir, "allow.sh", "cat >/dev/null; echo '"+answer+"'\n")
				var calls int
				h := newHarness(t, llmtest.Anthropic, setup{builtins: []tool.Tool{writeNote(&calls)}, opts: func(o *agent.Options) {
					o.Permissions = map[string]string{"write_note": rule}
					o.Hooks = hookRunner(t, dir, hooks.Config{hooks.PreToolUse: {{Hooks: []hooks.Command{{Command: allow}}}}})
				}},
					llmtest.Reply{Calls: []llmtest.Call{{ID: "w1", Name: "write_note", Args: `{"word":"a"}`}}},
					llmtest.Reply{Text: []string{"done"}},
				)
				if err := h.send(t, "write"); err != nil {
					t.Fatal(err)
				}
				res := h.srv.Requests()[1].LastToolResults()
				if len(h.approver.prompts()) != 0 {
					t.Errorf("the person was asked %d times; the hook's allow skips the question", len(h.approver.prompts()))
				}
				if rule == "ask" {
					if calls != 1 || len(res) != 1 || res[0].IsError {
						t.Errorf("under an ask rule the hook's allow runs the tool: %d calls, result %+v", calls, res)
					}
					return
				}
				if calls != 0 {
					t.Errorf("the tool ran %d times despite the deny rule", calls)
				}
				if len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].Text, "denied by the [permissions] configuration") {
					t.Errorf("result %+v, want the deny rule's refusal", res)
				}
			})
		}
	}
}
