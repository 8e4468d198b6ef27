package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

func writeTestFile(t *testing.T, p, s string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), mode); err != nil {
		t.Fatal(err)
	}
}

// Issue 29 in the TUI: in a trusted project, /help lists the project's
// command, /review:pr 42 sends its expanded body, the model loads a skill
// through the skill tool, a PreToolUse hook script that exits 2 keeps
// mcp__everything__echo from the server (the model reads its stderr, the
// transcript says the hook blocked it), and a Stop hook forces one more
// turn.
func TestTUICommandsSkillsHooks(t *testing.T) {
	peers := testpeer.Require(t)
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	writeTestFile(t, filepath.Join(work, "hooks", "guard.sh"), "#!/bin/sh\necho \"$(jq -r .tool_name) is blocked by policy\" >&2\nexit 2\n", 0o755)
	writeTestFile(t, filepath.Join(work, "hooks", "stop.sh"), "#!/bin/sh\n[ \"$(jq -r .stop_hook_active)\" = true ] && exit 0\necho 'Also say goodbye.' >&2\nexit 2\n", 0o755)
	writeTestFile(t, filepath.Join(work, ".otter", "config.toml"), fmt.Sprintf(`
[[mcp.servers]]
name = "everything"
command = %q
args = [%q, "stdio"]

[[hooks.PreToolUse]]
matcher = "mcp__everything__echo"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "./hooks/guard.sh"

[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = "./hooks/stop.sh"
`, peers.Node, peers.Everything), 0o644)
	writeTestFile(t, filepath.Join(work, ".otter", "commands", "review", "pr.md"), "---\ndescription: Review a pull request\nargument-hint: <number>\n---\nReview pull request #$1 and list its risks.\n", 0o644)
	writeTestFile(t, filepath.Join(work, ".otter", "skills", "release", "SKILL.md"), "---\nname: release\ndescription: Cut a release.\n---\nBump, tag, push.\n", 0o644)
	if err := (config.Paths{StateDir: filepath.Join(dir, "home", ".local", "state", "otter")}).Trust(work); err != nil {
		t.Fatal(err)
	}
	echo := "mcp__everything__echo"
	model := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "s1", Name: "skill", Args: `{"name":"release"}`}}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "e1", Name: echo, Args: `{"message":"hi"}`}}},
		llmtest.Reply{Text: []string{"Reviewed."}},
		llmtest.Reply{Text: []string{"Goodbye."}},
	)
	p := startTmux(t, dir, fakeModelConfig(model.URL), 100, 40)
	p.waitFor("1/1 servers")
	p.keys("/help", "Enter")
	p.waitFor("Commands")
	p.keys("End") // /help starts at its top; the person's commands end it
	p.waitFor("/review:pr <number>", "Review a pull request (project)", "/release")
	p.keys("/review:pr 42", "Enter")
	p.waitFor("Goodbye.", "blocked by policy")
	reqs := model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("the model got %d requests, want 4", len(reqs))
	}
	if got := reqs[0].Messages[len(reqs[0].Messages)-1].Text; got != "Review pull request #42 and list its risks." {
		t.Errorf("sent %q, want the command's expanded body", got)
	}
	if !slices.Contains(reqs[0].Tools, "skill") {
		t.Errorf("tools %v lack the skill tool", reqs[0].Tools)
	}
	if r := reqs[1].LastToolResults(); len(r) != 1 || !strings.Contains(r[0].Text, "Bump, tag, push.") {
		t.Errorf("skill result %+v", r)
	}
	if r := reqs[2].LastToolResults(); len(r) != 1 || !r[0].IsError || !strings.Contains(r[0].Text, echo+" is blocked by policy") {
		t.Errorf("echo result %+v", r)
	}
	if last := reqs[3].Messages[len(reqs[3].Messages)-1]; !strings.Contains(last.Text, "Also say goodbye.") {
		t.Errorf("the Stop hook's reason is not in the last request: %+v", last)
	}
	p.quit()
}
