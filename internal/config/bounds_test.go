package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nested returns `x = {a = {a = … 1 … }}` with depth inline tables.
func nested(depth int) string {
	return "x = " + strings.Repeat("{a = ", depth) + "1" + strings.Repeat("}", depth) + "\n"
}

// TestDeeplyNestedConfigIsRefusedBeforeDecoding: a config file nested
// deeper than MaxNesting, or larger than MaxFileBytes, is refused with
// file:line before the toml or JSON decoder sees it — from an untrusted
// project too, where it becomes a warning and the user's servers still
// load. (Before the bound, 10,000 levels took the decoder a minute and
// 6 GB; 200 levels decoded and came back as an unknown key "x".)
func TestDeeplyNestedConfigIsRefusedBeforeDecoding(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, file, text string
		line             int
		want             string
	}{
		{"inline tables", "deep.toml", "[agent]\nmodel = \"m\"\n" + nested(200), 3, "nested more than 16 levels"},
		{"arrays", "arrays.toml", "x = " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n", 1, "nested more than 16 levels"},
		{"json", "deep.json", `{"mcpServers": {"a": {"command": "x", "env":` + "\n" + strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100) + "}}}", 2, "nested more than 16 levels"},
		{"size", "big.toml", "# " + strings.Repeat("x", MaxFileBytes) + "\n", 0, "larger than 256 KiB"},
	} {
		p := write(tc.file, tc.text)
		_, err := LoadFile(p)
		var e *Error
		if !errors.As(err, &e) || e.File != p || e.Line != tc.line || !strings.Contains(e.Msg, tc.want) {
			t.Errorf("%s: LoadFile = %v; want %s:%d: …%s…", tc.name, err, p, tc.line, tc.want)
		}
	}

	// Brackets in strings and comments do not count.
	ok := write("strings.toml", "[agent]\n# "+strings.Repeat("{[", 50)+"\nsystem_prompt = \"\"\""+strings.Repeat("{", 50)+"\n\\\"\"\" \"\"\"\n"+
		"[[mcp.servers]]\nname = \"s\"\ncommand = \"x\"\nargs = ['"+strings.Repeat("[", 50)+"', \""+strings.Repeat("{\\\"", 50)+"\"]\n")
	if _, err := LoadFile(ok); err != nil {
		t.Errorf("brackets inside strings and comments counted: %v", err)
	}

	// An untrusted project's hostile file: a warning naming file:line,
	// and the user's own servers still load.
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "proj")
	write("home/config.toml", "[[mcp.servers]]\nname = \"mine\"\ncommand = \"x\"\n")
	proj := write("proj/.otter/config.toml", nested(10_000))
	cfg, err := Load(LoadOptions{Paths: Paths{ConfigDir: home, DataDir: filepath.Join(dir, "data"), StateDir: filepath.Join(dir, "state"), CacheDir: filepath.Join(dir, "cache")}, WorkDir: work})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(cfg.MCP.Servers) != 1 || cfg.MCP.Servers[0].Name != "mine" {
		t.Errorf("servers = %+v; want the user's own", cfg.MCP.Servers)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0].Error(), proj+":1: tables and arrays nested more than 16 levels") {
		t.Errorf("warnings = %v; want %s:1 nested too deep", cfg.Warnings, proj)
	}
}

// BenchmarkWorstBoundedConfig decodes the slowest file the bounds let
// through that the benchmark knows of: 256 KiB of tables nested
// MaxNesting deep.
func BenchmarkWorstBoundedConfig(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < MaxFileBytes-1000; i++ {
		sb.WriteString(strings.Replace(nested(MaxNesting-1), "x", fmt.Sprintf("x%d", i), 1))
	}
	p := filepath.Join(b.TempDir(), "worst.toml")
	if err := os.WriteFile(p, []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_, _ = LoadFile(p)
	}
}
