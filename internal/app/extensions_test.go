package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/skill"
)

func put(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// In an untrusted clone the project's commands, skills and hooks do
// nothing; the user's own do. Once the project is trusted, all count.
func TestExtensionsWaitForTrust(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no ~/.claude/skills of the machine's
	paths := testPaths(t, "")
	put(t, filepath.Join(paths.ConfigDir, "commands", "mine.md"), "Mine.")
	proj := t.TempDir()
	put(t, filepath.Join(proj, ".otter", "config.toml"), "[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"exit 2\"\n")
	put(t, filepath.Join(proj, ".otter", "commands", "review", "pr.md"), "---\ndescription: Review a PR\n---\nReview #$1")
	put(t, filepath.Join(proj, ".claude", "commands", "legacy.md"), "Legacy.")
	put(t, filepath.Join(proj, ".claude", "skills", "release", "SKILL.md"), "---\nname: release\ndescription: Cut a release.\n---\nSteps.")

	open := func() *App {
		a, err := New(context.Background(), Options{Parts: testParts, Paths: paths, WorkDir: proj})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		return a
	}
	a := open()
	ext := a.Extensions()
	if len(ext.Commands) != 1 || ext.Commands[0].Name != "mine" || len(ext.Skills) != 0 || !ext.Hooks.Empty() {
		t.Fatalf("untrusted: %+v", ext)
	}
	if _, ok := a.tools.Lookup(skill.ToolName); ok {
		t.Fatal("the skill tool is offered with no skill")
	}
	if s := a.agentSettings(a.cfg, AgentOptions{}, nil); strings.Contains(s.SystemPrompt+s.Skills, "release") {
		t.Fatal("an untrusted project's skill reached the system prompt")
	}

	if err := paths.Trust(proj); err != nil {
		t.Fatal(err)
	}
	a = open()
	ext = a.Extensions()
	var names []string
	for _, c := range ext.Commands {
		names = append(names, c.Name+"("+string(c.Scope)+")")
	}
	if got := strings.Join(names, " "); got != "legacy(project) mine(user) review:pr(project)" {
		t.Fatalf("commands: %s", got)
	}
	if len(ext.Skills) != 1 || ext.Hooks.Empty() {
		t.Fatalf("trusted: %+v", ext)
	}
	if _, ok := a.tools.Lookup(skill.ToolName); !ok {
		t.Fatal("the skill tool is not offered")
	}
	if p := a.agentSettings(a.cfg, AgentOptions{}, nil).Skills; !strings.Contains(p, "## Skills from the project "+proj+"\n- release: Cut a release.") {
		t.Fatalf("system prompt lacks the skill catalog:\n%s", p)
	}
}

// The trust report names what an untrusted project would add, and once
// trusted, what was added since (held back until trusted again).
func TestTrustReportNamesTheProjectsExtensions(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	paths := testPaths(t, "")
	proj := t.TempDir()
	put(t, filepath.Join(proj, ".otter", "commands", "review", "pr.md"), "Review #$1")
	put(t, filepath.Join(proj, ".agents", "skills", "release", "SKILL.md"), "---\nname: release\ndescription: Cut a release.\n---\nSteps.")
	a, err := New(context.Background(), Options{Parts: testParts, Paths: paths, WorkDir: proj})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	names := func(r TrustReport) string {
		var out []string
		for _, it := range r.Items {
			out = append(out, it.String())
		}
		return strings.Join(out, "\n")
	}
	if got := names(a.TrustReport()); got != "command /review:pr\nskill release" {
		t.Fatalf("report = %q", got)
	}
	if err := a.TrustReport().Approve(paths); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := a.TrustReport(); !r.Empty() || len(a.Extensions().Commands) != 1 || len(a.Extensions().Skills) != 1 {
		t.Fatalf("trusted: report %q, extensions %+v", names(r), a.Extensions())
	}
	// A pull adds a command: held back, and reported as new.
	put(t, filepath.Join(proj, ".otter", "commands", "deploy.md"), "Deploy !`./deploy.sh`")
	if _, err := a.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := a.TrustReport(); names(r) != "command /deploy" || r.Items[0].State != config.ItemNew || !r.Trusted {
		t.Fatalf("after the pull: %q", names(r))
	}
	for _, c := range a.Extensions().Commands {
		if c.Name == "deploy" {
			t.Fatal("a command added after trust is offered")
		}
	}
}

// Issue 35 point 8: trusting the project of an open conversation runs the
// SessionStart hooks trusting enabled, once, as a fresh start would; the
// user's own, which ran at the start, do not run again.
func TestTrustRunsTheSessionStartHooksItEnabled(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ran := filepath.Join(t.TempDir(), "ran")
	hook := func(who string) string {
		return "[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\ntype = \"command\"\ncommand = \"echo " + who + " >> '" + ran + "'\"\n"
	}
	paths := testPaths(t, hook("user"))
	proj := t.TempDir()
	put(t, filepath.Join(proj, ".otter", "config.toml"), hook("project"))
	ctx := context.Background()
	a, err := New(ctx, Options{Parts: testParts, Paths: paths, WorkDir: proj})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	c, err := a.NewConversation(ctx, ConversationOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Trust(ctx, a.TrustReport()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(ran)
	if got := string(b); got != "user\nproject\n" {
		t.Errorf("the SessionStart hooks ran as %q; want the user's at the start, then the project's once trusted", got)
	}
}
