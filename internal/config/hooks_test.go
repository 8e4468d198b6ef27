package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// Hooks add up across scopes, each with its file and line, and a project's
// count only once the project is trusted.
func TestHooksAddUpAcrossTrustedScopes(t *testing.T) {
	paths, proj := testEnv(t)
	user := writeFile(t, paths.UserConfigFile(), `
[[hooks.PreToolUse]]
matcher = "mcp__github__.*"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "~/bin/check-tool.sh"
timeout = 10
`)
	projFile := writeFile(t, filepath.Join(proj, ProjectDirName, ProjectConfigName), `
[[hooks.PreToolUse]]
[[hooks.PreToolUse.hooks]]
type = "command"
command = "./log.sh"

[[hooks.Stop]]
hooks = [{ type = "command", command = "./again.sh" }]
`)
	cfg := mustLoad(t, LoadOptions{Paths: paths, WorkDir: proj})
	if len(cfg.Hooks["PreToolUse"]) != 1 || len(cfg.Hooks["Stop"]) != 0 {
		t.Fatalf("an untrusted project's hooks must not load: %+v", cfg.Hooks)
	}
	if err := paths.Trust(proj); err != nil {
		t.Fatal(err)
	}
	cfg = mustLoad(t, LoadOptions{Paths: paths, WorkDir: proj})
	pre := cfg.Hooks["PreToolUse"]
	if len(pre) != 2 || len(cfg.Hooks["Stop"]) != 1 {
		t.Fatalf("hooks %+v", cfg.Hooks)
	}
	u, p := pre[0].Hooks[0], pre[1].Hooks[0]
	if pre[0].Matcher != "mcp__github__.*" || u.Command != "~/bin/check-tool.sh" || u.Timeout != 10 || u.File != user || u.Line != 4 {
		t.Errorf("user hook %+v", u)
	}
	if p.Command != "./log.sh" || p.File != projFile || p.Line != 3 {
		t.Errorf("project hook %+v", p)
	}
}

func TestHookConfigErrors(t *testing.T) {
	for _, c := range []struct{ toml, want string }{
		{"[[hooks.PreToolUs]]\n[[hooks.PreToolUs.hooks]]\ntype = \"command\"\ncommand = \"x\"\n", ":1: hooks.PreToolUs is not an event otter runs hooks for"},
		{"[[hooks.PreToolUse]]\nmatcher = \"mcp__(\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"x\"\n", `matcher "mcp__(" is not a regular expression`},
		{"[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"prompt\"\ncommand = \"x\"\n", `:2: hooks.Stop: hook type "prompt" is not supported`},
		{"[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\n", "a hook has no command"},
	} {
		paths, _ := testEnv(t)
		writeFile(t, paths.UserConfigFile(), c.toml)
		_, err := Load(LoadOptions{Paths: paths, WorkDir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%q) = %v, want %q", c.toml, err, c.want)
		}
	}
}

// A Claude Code settings file's hooks become TOML that loads back to the
// same hooks.
func TestHooksImportRoundTrip(t *testing.T) {
	settings := `{
  "permissions": {"allow": ["Bash(ls)"]},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash|Write", "hooks": [{"type": "command", "command": "jq -r '.tool_input.command' | grep -v \"rm\"", "timeout": 30}]}],
    "PostToolUse": [{"hooks": [{"type": "command", "command": "./log.sh"}, {"type": "prompt", "prompt": "x"}]}],
    "SubagentStop": [{"hooks": [{"type": "command", "command": "x"}]}]
  }
}`
	groups, skipped, err := ParseHooksJSON([]byte(settings), "settings.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 2 || !strings.Contains(strings.Join(skipped, ";"), "SubagentStop") {
		t.Errorf("skipped %q", skipped)
	}
	paths, _ := testEnv(t)
	if err := AddHooks(paths.UserConfigFile(), groups, "Imported from settings.json"); err != nil {
		t.Fatal(err)
	}
	cfg := mustLoad(t, LoadOptions{Paths: paths, WorkDir: t.TempDir()})
	pre := cfg.Hooks["PreToolUse"]
	if len(pre) != 1 || pre[0].Matcher != "Bash|Write" || pre[0].Hooks[0].Command != `jq -r '.tool_input.command' | grep -v "rm"` || pre[0].Hooks[0].Timeout != 30 {
		t.Fatalf("PreToolUse %+v", pre)
	}
	if post := cfg.Hooks["PostToolUse"]; len(post) != 1 || len(post[0].Hooks) != 1 || post[0].Hooks[0].Command != "./log.sh" {
		t.Fatalf("PostToolUse %+v", post)
	}
}
