package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestDeepDottedKeysAreRefusedBeforeDecoding: dotted keys and table
// headers nest as deeply as brackets and cost the decoder as much, so they
// are bounded before it runs, with file:line, like brackets — at the top
// level, in a header and inside an inline table — and so is a key's
// length. (Before, a 20 KB file holding a.a.a… = 1 with 10,000 parts took
// 37 s and 2 GB to load; 30,000 parts in a header 59 s; in an inline
// table 94 s.) Dots and quotes in strings, comments, floats and dates do
// not count, and otter's own settings load.
func TestDeepDottedKeysAreRefusedBeforeDecoding(t *testing.T) {
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
	dotted := func(n int) string { return strings.TrimSuffix(strings.Repeat("a.", n), ".") }
	for _, tc := range []struct {
		name, text string
		line       int
		want       string
	}{
		{"dotted key", "[agent]\nmodel = \"m\"\n" + dotted(10_000) + " = 1\n", 3, "keys nested more than 32 levels"},
		{"header", "# hostile\n[" + dotted(30_000) + "]\n", 2, "keys nested more than 32 levels"},
		{"array header", "[[" + dotted(30_000) + "]]\n", 1, "keys nested more than 32 levels"},
		{"inline table", "x = { " + dotted(30_000) + " = 1 }\n", 1, "keys nested more than 32 levels"},
		{"quoted parts", "x = 1\n" + strings.TrimSuffix(strings.Repeat(`"a". 'b' .`, 5_000), ".") + " = 1\n", 2, "keys nested more than 32 levels"},
		{"header plus key", "[" + dotted(20) + "]\n" + dotted(20) + " = 1\n", 2, "keys nested more than 32 levels"},
		{"inline tables add up", "x = {" + dotted(10) + " = {" + dotted(10) + " = {" + dotted(20) + " = 1}}}\n", 1, "keys nested more than 32 levels"},
		{"long bare key", "[agent]\n" + strings.Repeat("k", 100_000) + " = 1\n", 2, "a key longer than 256 bytes"},
		{"long quoted key", "env = { \"" + strings.Repeat("k", 300) + "\" = \"v\" }\n", 1, "a key longer than 256 bytes"},
	} {
		p := write(tc.name+".toml", tc.text)
		start := time.Now()
		_, err := LoadFile(p)
		var e *Error
		if !errors.As(err, &e) || e.File != p || e.Line != tc.line || !strings.Contains(e.Msg, tc.want) || e.Hint == "" {
			t.Errorf("%s: LoadFile = %v; want %s:%d: …%s… (what to do)", tc.name, err, p, tc.line, tc.want)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("%s: refusing took %s; the bound must come before decoding", tc.name, took)
		}
	}

	// What a real file holds passes: dots and brackets inside strings,
	// quoted keys, comments, floats, dates and version numbers.
	ok := write("fine.toml", "# a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g.h\n"+
		"[agent]\nmodel = \"a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g.h\"\n"+
		"compact_at = 0.5\n"+
		"[[mcp.servers]]\nname = \"s\"\ncommand = \"x\"\nargs = ['1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17.18.19.20.21.22.23.24.25.26.27.28.29.30.31.32.33', \"\"\"\n"+strings.Repeat("a.", 100)+"\"\"\"]\n"+
		"env.\"X.Y.Z\" = \"1979-05-27T07:32:00.999\"\n"+
		"headers = { \"X-A.b.c\" = \"v\", X-B = \"w\" }\n"+
		"[mcp.servers.oauth]\nclient_id = \"c\"\n")
	if _, err := LoadFile(ok); err != nil {
		t.Errorf("an ordinary file refused: %v", err)
	}
}

// TestManyProblemsOfAKindAreOneWarning: an untrusted project file with
// thousands of unknown keys gives one warning naming the first and
// counting the rest, not one per key (a 248 KB file printed 18,000).
func TestManyProblemsOfAKindAreOneWarning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "proj")
	var b strings.Builder
	for i := 0; b.Len() < MaxFileBytes-100; i++ {
		fmt.Fprintf(&b, "k%d = 1\n", i)
	}
	proj := filepath.Join(work, ".otter", "config.toml")
	if err := os.MkdirAll(filepath.Dir(proj), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(proj, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(LoadOptions{Paths: Paths{ConfigDir: home, DataDir: filepath.Join(dir, "data"), StateDir: filepath.Join(dir, "state"), CacheDir: filepath.Join(dir, "cache")}, WorkDir: work})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(cfg.Warnings) != 1 {
		t.Fatalf("%d warnings; want 1 for one kind of problem (first: %v)", len(cfg.Warnings), cfg.Warnings[:min(3, len(cfg.Warnings))])
	}
	w := cfg.Warnings[0].Error()
	if !strings.Contains(w, proj+`:1: unknown key "k0"`) || !strings.Contains(w, "more like it on lines 2, 3, 4, 5, 6, …") || len(w) > 1000 {
		t.Errorf("warning = %.1000s; want the first unknown key with file:line and a count of the rest", w)
	}
}
