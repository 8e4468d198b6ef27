package tui

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// Issue 35 point 4, the tester's walk: in a trusted project whose
// PreToolUse hook blocks a tool and whose UserPromptSubmit hook adds
// context, send a message (the call is denied), a custom command (the
// model refuses it: an error), an 80-line paste, switch the model, quit,
// and `otter -r ID`: the resumed screen shows what the live one showed, in
// the same order, and the model in use at quit.
func TestResumedLooksAsItDidLive(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	writeTestFile(t, filepath.Join(work, "hooks", "guard.sh"), "#!/bin/sh\necho \"$(jq -r .tool_name 2>/dev/null || echo the tool) is blocked by policy\" >&2\nexit 2\n", 0o755)
	writeTestFile(t, filepath.Join(work, "hooks", "context.sh"), "#!/bin/sh\necho 'Context from the hook: the build is green.'\n", 0o755)
	writeTestFile(t, filepath.Join(work, ".otter", "config.toml"), `
[[hooks.PreToolUse]]
matcher = "get_status"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "./hooks/guard.sh"

[[hooks.UserPromptSubmit]]
[[hooks.UserPromptSubmit.hooks]]
type = "command"
command = "./hooks/context.sh"
`, 0o644)
	writeTestFile(t, filepath.Join(work, ".otter", "commands", "review", "pr.md"), "---\ndescription: Review a pull request\n---\nReview pull request #$1 and list its risks.\n", 0o644)
	if err := (config.Paths{StateDir: filepath.Join(dir, "home", ".local", "state", "otter")}).Trust(work); err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "g1", Name: "get_status", Args: `{}`}}},
		llmtest.Reply{Text: []string{"The hook kept me from it."}},
		llmtest.Reply{Status: 400, Message: "the fake model refuses this one"},
		llmtest.Reply{Text: []string{"Got the paste."}},
		llmtest.Reply{Text: []string{"Still here."}},
	)
	p := startTmux(t, dir, fakeModelConfig(model.URL)+"context_window = 100000\n", 100, 40)
	p.waitFor("fake/fake-model")
	p.keys("test the hooks", "Enter")
	p.waitFor("The hook kept me from it.")
	p.keys("/review:pr 42 carefully", "Enter")
	p.waitFor("the fake model refuses this one")
	var lines []string
	for i := 1; i <= 80; i++ {
		lines = append(lines, fmt.Sprintf("pasted line %d", i))
	}
	p.tm("set-buffer", "-b", "paste", strings.Join(lines, "\n"))
	p.tm("paste-buffer", "-p", "-b", "paste", "-t", p.name)
	p.waitFor("[pasted 80 lines #1]")
	p.keys("Enter")
	p.waitFor("Got the paste.")
	p.keys("/model fake/other-model", "Enter")
	live := p.waitFor("the next message goes to fake/other-model", "fake/other-model ")

	// What was sent is what it was: the hook's context, the command's
	// body, the paste.
	reqs := model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("the model got %d requests, want 4", len(reqs))
	}
	last := func(i int) string { return reqs[i].Messages[len(reqs[i].Messages)-1].Text }
	if got := last(0); got != "test the hooks\n\nContext from the hook: the build is green." {
		t.Errorf("the first message was sent as %q", got)
	}
	if got := last(2); !strings.HasPrefix(got, "Review pull request #42 and list its risks.") || !strings.Contains(got, "Context from the hook") {
		t.Errorf("the command was sent as %q", got)
	}
	if got := last(3); !strings.Contains(got, "pasted line 1\npasted line 2\n") || !strings.Contains(got, "pasted line 80") {
		t.Errorf("the paste was sent as %q", got)
	}
	for _, want := range []string{"✗ denied", "a PreToolUse hook blocked get_status", "/review:pr 42 carefully", "[pasted 80 lines #1]"} {
		if !strings.Contains(live, want) {
			t.Fatalf("the live screen does not show %q:\n%s", want, live)
		}
	}
	p.quit()

	out, _ := p.prompt("sessions", "list", "--json")
	var list []struct{ ID, Model string }
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 {
		t.Fatalf("sessions list: %v\n%s", err, out)
	}
	p.restart(dir, "-r", list[0].ID)
	resumed := p.waitFor("Continuing session "+list[0].ID[:8], "Got the paste.")
	if strings.Contains(resumed, "Context from the hook") || strings.Contains(resumed, "Review pull request #42") || strings.Contains(resumed, "pasted line 1") {
		t.Errorf("the resumed screen shows what the model was sent, not what was typed:\n%s", resumed)
	}
	if strings.Contains(resumed, "✗ failed") {
		t.Errorf("the resumed screen shows the denied call as failed:\n%s", resumed)
	}
	if !strings.Contains(resumed, "fake/other-model ") {
		t.Errorf("resumed with another model than the one in use at quit (fake/other-model):\n%s", resumed)
	}
	// Every line of the live transcript, in order, from the first
	// message to the model switch's notice.
	transcript := func(screen string) []string {
		var out []string
		in := false
		for _, l := range strings.Split(screen, "\n") {
			l = strings.TrimRight(l, " ")
			if strings.HasPrefix(l, "› test the hooks") {
				in = true
			}
			if in && l != "" {
				out = append(out, l)
			}
			if strings.Contains(l, "the next message goes to") {
				break
			}
		}
		return out
	}
	want, got := transcript(live), transcript(resumed)
	if len(want) < 6 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the resumed transcript differs from the live one:\n--- live\n%s\n--- resumed\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}

	p.keys("still there?", "Enter")
	p.waitFor("Still here.")
	if r := model.Requests(); r[len(r)-1].Model != "other-model" {
		t.Errorf("the resumed conversation went to %q, want other-model", r[len(r)-1].Model)
	}
	p.quit()
}
