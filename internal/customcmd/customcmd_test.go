package customcmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadNamespacesAndPrecedence(t *testing.T) {
	user, claude, proj := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(user, "hello.md"), "# Say hello\nSay hello to $ARGUMENTS.")
	write(t, filepath.Join(user, "review", "pr.md"), "---\ndescription: user review\n---\nuser body")
	write(t, filepath.Join(claude, "review", "pr.md"), "---\ndescription: claude review\nallowed-tools: mcp__github__get_pr, Bash(git diff:*)\n---\nclaude body")
	write(t, filepath.Join(proj, "review", "pr.md"), "---\ndescription: Review a pull request\nargument-hint: <number>\nallowed-tools: [mcp__github__get_pr]\nmodel: m2\n---\nReview PR #$1 carefully.")
	write(t, filepath.Join(proj, "broken.md"), "---\ndescription: [oops\n---\nx")
	write(t, filepath.Join(proj, "notes.txt"), "not a command")

	cmds, problems := Load([]Dir{{Path: user, Scope: User}, {Path: filepath.Join(t.TempDir(), "missing"), Scope: User}, {Path: claude, Scope: Project}, {Path: proj, Scope: Project}})
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), filepath.Join(proj, "broken.md")+":") {
		t.Fatalf("problems %v", problems)
	}
	if len(cmds) != 2 {
		t.Fatalf("cmds %+v", cmds)
	}
	hello, pr := cmds[0], cmds[1]
	if hello.Name != "hello" || hello.Description != "Say hello" || hello.Scope != User {
		t.Fatalf("hello %+v", hello)
	}
	if pr.Name != "review:pr" || pr.Description != "Review a pull request" || pr.ArgumentHint != "<number>" ||
		pr.Model != "m2" || pr.Scope != Project || !pr.ToolAllowed("mcp__github__get_pr") || pr.ToolAllowed("mcp__github__merge") {
		t.Fatalf("review:pr %+v", pr)
	}
}

func TestAllowedToolsAsString(t *testing.T) {
	d := t.TempDir()
	write(t, filepath.Join(d, "x.md"), "---\nallowed-tools: Bash(git status), mcp__a__*\n---\nbody")
	cmds, problems := Load([]Dir{{Path: d, Scope: User}})
	if len(problems) != 0 || len(cmds) != 1 {
		t.Fatal(problems)
	}
	c := cmds[0]
	if !c.ShellAllowed("git status") || c.ShellAllowed("git status; rm -rf /x") || !c.ToolAllowed("mcp__a__b") {
		t.Fatalf("%+v", c.AllowedTools)
	}
}

func TestExpand(t *testing.T) {
	c := Command{Name: "review:pr", Body: "Review PR #$1 ($2). All: $ARGUMENTS", AllowedTools: []string{"Bash(git diff:*)"}}
	exp, err := c.Expand(context.Background(), ` 42 "needs care" `, nil)
	if err != nil {
		t.Fatal(err)
	}
	if exp.Prompt != `Review PR #42 (needs care). All: 42 "needs care"` {
		t.Fatalf("%q", exp.Prompt)
	}
	// Without $ARGUMENTS the arguments are appended.
	exp, _ = Command{Name: "x", Body: "Do it."}.Expand(context.Background(), "now", nil)
	if exp.Prompt != "Do it.\n\nARGUMENTS: now" {
		t.Fatalf("%q", exp.Prompt)
	}
}

func TestShellSpans(t *testing.T) {
	var ran []string
	run := func(_ context.Context, cmd string) (string, error) {
		ran = append(ran, cmd)
		return "diff output\n", nil
	}
	c := Command{Name: "ship", Body: "Changes:\n!`git diff HEAD`\nStatus: !`git status`", AllowedTools: []string{"Bash(git diff:*)"}}
	exp, err := c.Expand(context.Background(), "", run)
	if err != nil {
		t.Fatal(err)
	}
	if len(ran) != 1 || ran[0] != "git diff HEAD" {
		t.Fatalf("ran %q", ran)
	}
	if !strings.Contains(exp.Prompt, "Changes:\ndiff output\n") || !strings.Contains(exp.Prompt, "[not run: git status]") {
		t.Fatalf("%q", exp.Prompt)
	}
	if len(exp.Notes) != 1 || !strings.Contains(exp.Notes[0], "allowed-tools does not permit it") {
		t.Fatalf("notes %q", exp.Notes)
	}
}

// TestLoadConfinesAProjectsCommands: a project's command file that links
// out of the project (to /etc/shadow, here a file beside the project) is
// not loaded, and the problem names the file and where it leads; a named
// pipe called x.md is refused at once; a link inside the project and the
// user's own link anywhere are loaded. Before, /shadow sent the linked
// file and the pipe hung otter at start.
func TestLoadConfinesAProjectsCommands(t *testing.T) {
	base := t.TempDir()
	proj, user := filepath.Join(base, "proj"), filepath.Join(base, "user")
	shadow := filepath.Join(base, "shadow")
	write(t, shadow, "SHADOW")
	write(t, filepath.Join(proj, "prompts", "review.md"), "Review it.")
	cmds := filepath.Join(proj, ".otter", "commands")
	for link, to := range map[string]string{
		filepath.Join(cmds, "shadow.md"): shadow,
		filepath.Join(cmds, "review.md"): filepath.Join(proj, "prompts", "review.md"),
		filepath.Join(user, "mine.md"):   shadow,
	} {
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(cmds, "x.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		cmds     []Command
		problems []error
	}
	done := make(chan result, 1)
	go func() {
		c, p := Load([]Dir{{Path: user, Scope: User}, {Path: cmds, Scope: Project, Confine: proj}})
		done <- result{c, p}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Load did not return within 5 s")
	}
	var names []string
	for _, c := range r.cmds {
		names = append(names, c.Name+"="+c.Body)
	}
	if got := strings.Join(names, " "); got != "mine=SHADOW review=Review it." {
		t.Errorf("commands %q, want the user's link and the link inside the project only", got)
	}
	var all []string
	for _, p := range r.problems {
		all = append(all, p.Error())
	}
	for _, want := range []string{
		"command file " + filepath.Join(cmds, "shadow.md") + " links to " + shadow + ", outside the project",
		"command file " + filepath.Join(cmds, "x.md") + " is a named pipe (FIFO)",
	} {
		if !strings.Contains(strings.Join(all, "\n"), want) {
			t.Errorf("problems do not say %q:\n%s", want, strings.Join(all, "\n"))
		}
	}
}
