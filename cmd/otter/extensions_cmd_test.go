package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
	"github.com/otter-sh/otter/internal/toolname"
)

func putFile(t *testing.T, p, s string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), mode); err != nil {
		t.Fatal(err)
	}
}

// extensionProject is a cloned project with a custom command, a skill with
// a reference file, hooks written as Claude Code hook scripts (jq on stdin,
// exit 2 with a message) and the reference MCP server.
func extensionProject(t *testing.T, peers testpeer.Peers) (proj string) {
	proj = t.TempDir()
	hooks := filepath.Join(proj, "hooks")
	putFile(t, filepath.Join(hooks, "guard.sh"), `#!/bin/sh
tool=$(jq -r '.tool_name')
echo "$tool is blocked by the team's policy" >&2
exit 2
`, 0o755)
	putFile(t, filepath.Join(hooks, "log.sh"), "#!/bin/sh\njq -c '{tool: .tool_name, input: .tool_input}' >> \"$OTTER_PROJECT_DIR/calls.jsonl\"\n", 0o755)
	putFile(t, filepath.Join(hooks, "context.sh"), "#!/bin/sh\necho \"Sprint goal: ship $(jq -r .prompt | cut -c1-10)\"\n", 0o755)
	putFile(t, filepath.Join(hooks, "stop.sh"), `#!/bin/sh
if [ "$(jq -r .stop_hook_active)" = "true" ]; then exit 0; fi
echo "Also say goodbye." >&2
exit 2
`, 0o755)
	putFile(t, filepath.Join(hooks, "slow.sh"), "#!/bin/sh\nsleep 100 &\necho $! > \"$OTTER_PROJECT_DIR/slow.pid\"\nwait\n", 0o755)
	putFile(t, filepath.Join(proj, ".otter", "config.toml"), peers.EverythingConfig()+`
[[hooks.PreToolUse]]
matcher = "mcp__everything__echo"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "$OTTER_PROJECT_DIR/hooks/guard.sh"

[[hooks.PostToolUse]]
[[hooks.PostToolUse.hooks]]
type = "command"
command = "$OTTER_PROJECT_DIR/hooks/log.sh"

[[hooks.PostToolUse]]
matcher = "skill"
[[hooks.PostToolUse.hooks]]
type = "command"
command = "$OTTER_PROJECT_DIR/hooks/slow.sh"
timeout = 1

[[hooks.UserPromptSubmit]]
[[hooks.UserPromptSubmit.hooks]]
type = "command"
command = "$OTTER_PROJECT_DIR/hooks/context.sh"

[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = "$OTTER_PROJECT_DIR/hooks/stop.sh"
`, 0o644)
	putFile(t, filepath.Join(proj, ".otter", "commands", "review", "pr.md"), "---\ndescription: Review a pull request\nargument-hint: <number>\n---\nReview pull request #$1 and list its risks.\n", 0o644)
	putFile(t, filepath.Join(proj, ".otter", "skills", "release", "SKILL.md"), "---\nname: release\ndescription: Cut a release of this project.\n---\n# Release\nFollow reference/checklist.md step by step.\n", 0o644)
	putFile(t, filepath.Join(proj, ".otter", "skills", "release", "reference", "checklist.md"), "1. Bump the version.\n2. Tag it.\n", 0o644)
	return proj
}

// TestExtensionsHeadless is issue 29's "done when" for otter -p: in an
// untrusted clone none of the project's commands, skills or hooks does
// anything; once trusted, /review:pr 42 sends the expanded body, the model
// loads a skill and reads its reference file through the skill tool, a
// PreToolUse hook that exits 2 keeps mcp__everything__echo from the server
// and the model reads its stderr, a PostToolUse hook logs each call, a
// UserPromptSubmit hook's output is in the request, a Stop hook forces one
// more turn, and a hook past its timeout is killed with its children.
func TestExtensionsHeadless(t *testing.T) {
	paths := configTestHome(t)
	proj := extensionProject(t, testpeer.Require(t))
	echo := toolname.Qualified("everything", "echo")

	// Untrusted: the project's command is refused, not sent as text (issue
	// 35 point 9); a message goes as typed, with no hook, skill or command.
	srv := llmtest.New(t, llmtest.Anthropic, llmtest.Reply{Text: []string{"ok"}})
	cfg := promptConfig(t, srv, "")
	if _, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", cfg, "--cwd", proj, "-p", "/review:pr 42"); err == nil || !strings.Contains(stderr+err.Error(), "not trusted") {
		t.Fatalf("untrusted /review:pr 42: err %v, stderr:\n%s\nwant it refused as the untrusted project's command", err, stderr)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("the untrusted project's command reached the model (%d requests)", n)
	}
	if _, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", cfg, "--cwd", proj, "-p", "review 42"); err != nil {
		t.Fatalf("untrusted run: %v\n%s", err, stderr)
	}
	req := srv.Requests()[0]
	if req.Messages[0].Text != "review 42" || slices.Contains(req.Tools, "skill") || strings.Contains(req.System, "release") {
		t.Fatalf("an untrusted project's extensions acted: message %q tools %v", req.Messages[0].Text, req.Tools)
	}
	if _, err := os.Stat(filepath.Join(proj, "calls.jsonl")); err == nil {
		t.Fatal("an untrusted project's hook ran")
	}

	if err := paths.Trust(proj); err != nil {
		t.Fatal(err)
	}
	srv = llmtest.New(t, llmtest.Anthropic,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "s1", Name: "skill", Args: `{"name":"release"}`}}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "s2", Name: "skill", Args: `{"name":"release","file":"reference/checklist.md"}`}}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "e1", Name: echo, Args: `{"message":"hi"}`}}},
		llmtest.Reply{Text: []string{"Reviewed."}},
		llmtest.Reply{Text: []string{"Goodbye."}},
	)
	cfg = promptConfig(t, srv, "")
	stdout, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", cfg, "--cwd", proj, "--dangerously-allow-all", "-p", "/review:pr 42")
	if err != nil {
		t.Fatalf("trusted run: %v\n%s", err, stderr)
	}
	if stdout != "Goodbye.\n" {
		t.Errorf("stdout %q, want the answer after the Stop hook's turn", stdout)
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("the model got %d requests, want 5 (the Stop hook forces exactly one more)", len(reqs))
	}
	first := reqs[0].Messages[0].Text
	if !strings.Contains(first, "Review pull request #42 and list its risks.") || !strings.Contains(first, "Sprint goal: ship /review:p") {
		t.Errorf("first message %q lacks the command's body or the UserPromptSubmit hook's output", first)
	}
	if !slices.Contains(reqs[0].Tools, "skill") || !strings.Contains(reqs[0].System, "- release: Cut a release of this project.") {
		t.Errorf("the skill is not offered: tools %v", reqs[0].Tools)
	}
	if r := reqs[1].LastToolResults(); len(r) != 1 || !strings.Contains(r[0].Text, "Follow reference/checklist.md") || !strings.Contains(r[0].Text, "- reference/checklist.md") {
		t.Errorf("skill load result %+v", r)
	}
	if r := reqs[2].LastToolResults(); len(r) != 1 || r[0].Text != "1. Bump the version.\n2. Tag it.\n" {
		t.Errorf("skill file result %+v", r)
	}
	r := reqs[3].LastToolResults()
	if len(r) != 1 || !r[0].IsError || !strings.Contains(r[0].Text, echo+" is blocked by the team's policy") || strings.Contains(r[0].Text, "Echo: hi") {
		t.Errorf("the PreToolUse hook should keep echo from the server and give its stderr to the model: %+v", r)
	}
	if last := reqs[4].Messages[len(reqs[4].Messages)-1]; !strings.Contains(last.Text, "Also say goodbye.") {
		t.Errorf("the Stop hook's reason is not in the last request: %+v", last)
	}
	log, err := os.ReadFile(filepath.Join(proj, "calls.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(log)), "\n"); len(lines) != 2 || !strings.Contains(lines[1], `"file":"reference/checklist.md"`) {
		t.Errorf("PostToolUse log: want the two skill calls (the blocked echo did not run):\n%s", log)
	}
	if !strings.Contains(stderr, "ran past its 1s timeout and was stopped") {
		t.Errorf("the slow hook's timeout is not reported:\n%s", stderr)
	}
	data, err := os.ReadFile(filepath.Join(proj, "slow.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the slow hook's child %d outlived its timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
