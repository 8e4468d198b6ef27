package hooks

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// script writes an executable shell script into dir and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustSet(t *testing.T, cfg Config) *Set {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPreToolUseExit2BlocksWithStderr(t *testing.T) {
	dir := t.TempDir()
	guard := script(t, dir, "guard.sh", `echo "echo is not allowed here" >&2; exit 2`)
	s := mustSet(t, Config{PreToolUse: {{Matcher: "mcp__everything__.*", Hooks: []Command{{Command: guard}}}}})

	out := s.Run(context.Background(), PreToolUse, Input{ToolName: "mcp__everything__echo", ToolInput: json.RawMessage(`{"message":"hi"}`)}, Env{ProjectDir: dir})
	if !out.Block || out.Reason != "echo is not allowed here" {
		t.Fatalf("exit 2 should block with stderr as the reason, got %+v", out)
	}
	// The matcher is anchored: another server's tool is not matched.
	out = s.Run(context.Background(), PreToolUse, Input{ToolName: "mcp__other__echo"}, Env{ProjectDir: dir})
	if out.Ran != 0 || out.Block {
		t.Fatalf("mcp__other__echo should not match mcp__everything__.*: %+v", out)
	}
}

// A hook written for Claude Code — jq on stdin, exit 2 with a message — works
// as it is.
func TestClaudeCodeStyleScript(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("jq is needed (scripts/install-system-deps.sh installs it)")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.jsonl")
	guard := script(t, dir, "guard.sh", `
input=$(cat)
tool=$(printf '%s' "$input" | jq -r '.tool_name')
cmd=$(printf '%s' "$input" | jq -r '.tool_input.command // empty')
printf '%s\n' "$input" >> "$OTTER_PROJECT_DIR/calls.jsonl"
case "$cmd" in rm*) echo "Blocked: rm commands are not allowed ($tool)" >&2; exit 2;; esac
exit 0
`)
	s := mustSet(t, Config{PreToolUse: {{Matcher: "mcp__shell__run", Hooks: []Command{{Command: guard}}}}})
	out := s.Run(context.Background(), PreToolUse, Input{SessionID: "s1", CWD: dir, ToolName: "mcp__shell__run", ToolInput: json.RawMessage(`{"command":"rm -rf /"}`)}, Env{ProjectDir: dir})
	if !out.Block || !strings.Contains(out.Reason, "Blocked: rm commands are not allowed (mcp__shell__run)") {
		t.Fatalf("got %+v", out)
	}
	out = s.Run(context.Background(), PreToolUse, Input{ToolName: "mcp__shell__run", ToolInput: json.RawMessage(`{"command":"ls"}`)}, Env{ProjectDir: dir})
	if out.Block || len(out.Failures) != 0 {
		t.Fatalf("ls should pass: %+v", out)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 logged inputs, got %q", data)
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": dir, "tool_name": "mcp__shell__run"} {
		if first[k] != want {
			t.Errorf("input %s = %v, want %v", k, first[k], want)
		}
	}
}

func TestJSONDecisions(t *testing.T) {
	dir := t.TempDir()
	deny := script(t, dir, "deny.sh", `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on Fridays"}}'`)
	allow := script(t, dir, "allow.sh", `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`)
	ask := script(t, dir, "ask.sh", `echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"check it"}}'`)
	ctxHook := script(t, dir, "ctx.sh", `echo '{"hookSpecificOutput":{"additionalContext":"the build is red"},"systemMessage":"heads up"}'`)

	cases := []struct {
		name      string
		hooks     []string
		wantPerm  string
		wantBlock bool
	}{
		{"allow alone", []string{allow}, "allow", false},
		{"ask beats allow", []string{allow, ask}, "ask", false},
		{"deny beats all and blocks", []string{allow, ask, deny}, "deny", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var cmds []Command
			for _, h := range c.hooks {
				cmds = append(cmds, Command{Command: h})
			}
			s := mustSet(t, Config{PreToolUse: {{Hooks: cmds}}})
			out := s.Run(context.Background(), PreToolUse, Input{ToolName: "x"}, Env{ProjectDir: dir})
			if out.Permission != c.wantPerm || out.Block != c.wantBlock {
				t.Fatalf("permission %q block %v, want %q %v (%+v)", out.Permission, out.Block, c.wantPerm, c.wantBlock, out)
			}
			if c.wantBlock && out.Reason != "not on Fridays" {
				t.Fatalf("reason %q", out.Reason)
			}
		})
	}
	s := mustSet(t, Config{PostToolUse: {{Matcher: "*", Hooks: []Command{{Command: ctxHook}}}}})
	out := s.Run(context.Background(), PostToolUse, Input{ToolName: "x"}, Env{ProjectDir: dir})
	if len(out.Context) != 1 || out.Context[0] != "the build is red" || len(out.Messages) != 1 {
		t.Fatalf("additionalContext/systemMessage: %+v", out)
	}
}

func TestUserPromptSubmitStdoutIsContext(t *testing.T) {
	dir := t.TempDir()
	h := script(t, dir, "ctx.sh", `jq -r '"You were asked: " + .prompt'`)
	s := mustSet(t, Config{UserPromptSubmit: {{Hooks: []Command{{Command: h}}}}})
	out := s.Run(context.Background(), UserPromptSubmit, Input{Prompt: "hello"}, Env{ProjectDir: dir})
	if len(out.Context) != 1 || out.Context[0] != "You were asked: hello" {
		t.Fatalf("%+v", out)
	}
	// Plain stdout of a tool hook is not context.
	s = mustSet(t, Config{PostToolUse: {{Hooks: []Command{{Command: "echo noise"}}}}})
	if out := s.Run(context.Background(), PostToolUse, Input{ToolName: "x"}, Env{ProjectDir: dir}); len(out.Context) != 0 {
		t.Fatalf("%+v", out)
	}
}

func TestOtherExitIsANonBlockingFailure(t *testing.T) {
	dir := t.TempDir()
	s := mustSet(t, Config{Stop: {{Hooks: []Command{{Command: "echo oops >&2; exit 1"}, {Command: filepath.Join(dir, "missing.sh")}}}}})
	out := s.Run(context.Background(), Stop, Input{}, Env{ProjectDir: dir})
	if out.Block || len(out.Failures) != 2 {
		t.Fatalf("%+v", out)
	}
	msgs := out.Failures[0].String() + "\n" + out.Failures[1].String()
	if !strings.Contains(msgs, `exited 1: oops`) || !strings.Contains(msgs, "exited 127") {
		t.Fatalf("failures should say what exited how:\n%s", msgs)
	}
}

// A hook past its timeout is killed with its whole process group, and that
// is reported.
func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "child.pid")
	h := script(t, dir, "slow.sh", `sleep 100 & echo $! > `+pidfile+`; wait`)
	s := mustSet(t, Config{PreToolUse: {{Hooks: []Command{{Command: h, Timeout: 300 * time.Millisecond}}}}})
	out := s.Run(context.Background(), PreToolUse, Input{ToolName: "x"}, Env{ProjectDir: dir})
	if len(out.Failures) != 1 || !out.Failures[0].TimedOut || out.Block {
		t.Fatalf("%+v", out)
	}
	if msg := out.Failures[0].String(); !strings.Contains(msg, "ran past its 300ms timeout and was stopped") {
		t.Fatalf("message %q", msg)
	}
	data, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the hook's child %d is still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMatchersAndEnv(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "env.txt")
	s := mustSet(t, Config{
		SessionStart: {{Matcher: "resume", Hooks: []Command{{Command: `printf '%s %s' "$OTTER_PROJECT_DIR" "$CLAUDE_PROJECT_DIR" > ` + out}}}},
	})
	if got := s.Run(context.Background(), SessionStart, Input{Source: "startup"}, Env{ProjectDir: dir}); got.Ran != 0 {
		t.Fatal("matcher resume ran on startup")
	}
	s.Run(context.Background(), SessionStart, Input{Source: "resume"}, Env{ProjectDir: dir})
	data, _ := os.ReadFile(out)
	if string(data) != dir+" "+dir {
		t.Fatalf("env: %q", data)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{"PreToolUs": {{Hooks: []Command{{Command: "x", Source: "/p/config.toml"}}}}}, "/p/config.toml: hooks.PreToolUs: unknown event"},
		{Config{PreToolUse: {{Matcher: "mcp__(", Hooks: []Command{{Command: "x"}}}}}, `matcher "mcp__(" is not a regular expression`},
		{Config{Stop: {{Hooks: []Command{{Command: " "}}}}}, "a hook has no command"},
	} {
		_, err := New(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New: %v, want %q", err, c.want)
		}
	}
}

func TestIdenticalCommandsRunOnce(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "n")
	cmd := "echo x >> " + count
	s := mustSet(t, Config{PostToolUse: {{Matcher: "a.*", Hooks: []Command{{Command: cmd}}}, {Matcher: "ab", Hooks: []Command{{Command: cmd}}}}})
	s.Run(context.Background(), PostToolUse, Input{ToolName: "ab"}, Env{ProjectDir: dir})
	data, _ := os.ReadFile(count)
	if strings.Count(string(data), "x") != 1 {
		t.Fatalf("ran %d times", strings.Count(string(data), "x"))
	}
}
