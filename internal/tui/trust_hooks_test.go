package tui

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/otter-sh/otter/internal/config"
)

// An untrusted project's hooks are listed in the trust prompt by their
// commands, whichever way the TOML writes them.
func TestUntrustedSettingsListHookCommands(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(`
[[hooks.PreToolUse]]
matcher = "mcp__github__.*"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "./hooks/check.sh"

[[hooks.Stop]]
hooks = [{ type = "command", command = "./hooks/again.sh" }]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	got := untrustedSettings([]config.Source{{Path: p, Scope: config.ScopeProject}})
	want := []string{"hook PreToolUse mcp__github__.*: ./hooks/check.sh", "hook Stop: ./hooks/again.sh"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
