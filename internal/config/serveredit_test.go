package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// handCommented is a config as a person writes it: comments everywhere,
// odd spacing, a sub-table, a multi-line array.
const handCommented = `# my otter config
[mcp]
enabled = true   # on

# --- servers ---

# the docs server, keep it first
[[mcp.servers]]
name = 'docs'
command = "docs-mcp"   # from PATH
args = [
  "--root", ".",  # here
]
enabled = true # for now

[[mcp.servers]]
  name = "remote"
  url  = "https://example.com/mcp"
  # timeout = "1m"

  [mcp.servers.oauth]
  client_id = "abc"

# last words
[permissions]
"mcp__docs__*" = "allow"
`

// changed returns the lines of before and after between their common
// prefix and suffix: what an edit changed.
func changed(before, after string) (removed, added []string, at int) {
	b := strings.SplitAfter(before, "\n")
	a := strings.SplitAfter(after, "\n")
	p := 0
	for p < len(b) && p < len(a) && b[p] == a[p] {
		p++
	}
	s := 0
	for s < len(b)-p && s < len(a)-p && b[len(b)-1-s] == a[len(a)-1-s] {
		s++
	}
	return b[p : len(b)-s], a[p : len(a)-s], p + 1
}

func writeTemp(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func read(t *testing.T, f string) string {
	t.Helper()
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func namesIn(t *testing.T, text string) []string {
	t.Helper()
	var doc struct {
		MCP struct {
			Servers []struct{ Name string } `toml:"servers"`
		} `toml:"mcp"`
	}
	if _, err := toml.Decode(text, &doc); err != nil {
		t.Fatalf("edited file does not parse: %v\n%s", err, text)
	}
	var out []string
	for _, s := range doc.MCP.Servers {
		out = append(out, s.Name)
	}
	return out
}

func TestServerEditsKeepEverythingElse(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile(filepath.Join("..", "..", "config.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, text, server string
	}{
		{"config.example.toml", string(example), "github"},
		{"hand-commented", handCommented, "docs"},
		{"hand-commented sub-table", handCommented, "remote"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			names := namesIn(t, c.text)
			entry, ok := findServer(c.text, c.server)
			if !ok {
				t.Fatalf("%s not found", c.server)
			}
			inEntry := func(lines []string, at int) {
				t.Helper()
				if at < entry.first-3 || at+len(lines)-1 > entry.last+1 {
					t.Errorf("changed lines %d..%d, outside %s's entry (%d..%d): %q", at, at+len(lines)-1, c.server, entry.first, entry.last, lines)
				}
			}

			// disable: one line of the entry changes or is added.
			f := writeTemp(t, c.text)
			if err := SetServerEnabled(f, c.server, false); err != nil {
				t.Fatal(err)
			}
			after := read(t, f)
			removed, added, at := changed(c.text, after)
			if len(added) != 1 || len(removed) > 1 || !strings.Contains(added[0], "enabled = false") {
				t.Errorf("disable changed %q into %q", removed, added)
			}
			inEntry(added, at)
			if len(removed) == 1 && strings.Contains(removed[0], "#") && !strings.Contains(added[0], "#") {
				t.Errorf("the enabled line lost its comment: %q → %q", removed[0], added[0])
			}
			// enable again: back to the same text when a line was rewritten.
			if err := SetServerEnabled(f, c.server, true); err != nil {
				t.Fatal(err)
			}
			if len(removed) == 1 && read(t, f) != c.text {
				_, a, _ := changed(c.text, read(t, f))
				t.Errorf("disable then enable left %q", a)
			}

			// remove: one contiguous block, holding the entry, goes.
			f = writeTemp(t, c.text)
			if err := RemoveServer(f, c.server); err != nil {
				t.Fatal(err)
			}
			after = read(t, f)
			removed, added, at = changed(c.text, after)
			if len(added) != 0 {
				t.Errorf("remove added %q", added)
			}
			inEntry(removed, at)
			if !strings.Contains(strings.Join(removed, ""), "[[mcp.servers]]") {
				t.Errorf("removed %q", removed)
			}
			want := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == c.server })
			if got := namesIn(t, after); !slices.Equal(got, want) {
				t.Errorf("servers after remove = %v, want %v", got, want)
			}

			// add: the file is kept and the entry follows it.
			f = writeTemp(t, c.text)
			on := false
			if err := AddServer(f, Server{Name: "added", Command: "npx", Args: []string{"-y", "pkg"}, Env: map[string]string{"K": "v"}, Enabled: &on}); err != nil {
				t.Fatal(err)
			}
			after = read(t, f)
			if !strings.HasPrefix(after, c.text) {
				t.Error("add changed the file before its new entry")
			}
			if got := namesIn(t, after); !slices.Equal(got, append(slices.Clone(names), "added")) {
				t.Errorf("servers after add = %v", got)
			}
			// adding a name that exists names the file and line.
			err := AddServer(f, Server{Name: c.server, URL: "https://x"})
			wantAt := f + ":" + strconv.Itoa(entry.first) + ":"
			if !errors.Is(err, ErrServerExists) || !strings.HasPrefix(err.Error(), wantAt) {
				t.Errorf("adding %s again: %v (want it to start with %s)", c.server, err, wantAt)
			}
			if read(t, f) != after {
				t.Error("a refused add changed the file")
			}
		})
	}
}

func TestServerEditsRefuseWhatTheyCannotDo(t *testing.T) {
	t.Parallel()
	f := writeTemp(t, handCommented)
	if err := RemoveServer(f, "nope"); !errors.Is(err, ErrNoServer) {
		t.Errorf("remove nope: %v", err)
	}
	if err := SetServerEnabled(f, "nope", true); !errors.Is(err, ErrNoServer) {
		t.Errorf("enable nope: %v", err)
	}
	broken := writeTemp(t, "[mcp\nx = 1\n")
	if err := AddServer(broken, Server{Name: "a", Command: "a"}); err == nil || !strings.Contains(err.Error(), "does not parse") {
		t.Errorf("add to a broken file: %v", err)
	}
	if read(t, broken) != "[mcp\nx = 1\n" {
		t.Error("the broken file was changed")
	}
	missing := filepath.Join(t.TempDir(), "sub", "config.toml")
	if err := AddServer(missing, Server{Name: "a", URL: "https://a.example/mcp", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, missing); !strings.HasPrefix(got, "[[mcp.servers]]\nname = \"a\"\n") || !strings.Contains(got, `Authorization = "Bearer ${TOKEN}"`) {
		t.Errorf("new file:\n%s", got)
	}
}

func TestScopeFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ProjectDirName), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(proj, "sub")
	os.MkdirAll(sub, 0o755)
	paths := Paths{ConfigDir: filepath.Join(dir, "cfg")}
	for scope, want := range map[Scope]string{
		ScopeUser:    filepath.Join(dir, "cfg", "config.toml"),
		ScopeProject: filepath.Join(proj, ".otter", "config.toml"),
		ScopeLocal:   filepath.Join(proj, ".otter", "config.local.toml"),
	} {
		if got, err := ScopeFile(paths, sub, scope); err != nil || got != want {
			t.Errorf("ScopeFile(%s) = %q, %v; want %q", scope, got, err, want)
		}
	}
	if _, err := ScopeFile(paths, sub, "team"); err == nil || !strings.Contains(err.Error(), "use user, project or local") {
		t.Errorf("bad scope: %v", err)
	}
	if m := (Server{Name: "s", Headers: map[string]string{"Authorization": "Bearer abcdefghijklmnopqrstuvwxyz"}}).Masked(); m.Headers["Authorization"] != "****" {
		t.Errorf("masked header = %q", m.Headers["Authorization"])
	}
}

// TestServerEditsRefuseInlineArrays: an edit of a file whose servers are an
// inline array changes nothing and names the array's line, whether the
// array is written under [mcp] or as a dotted key, on one line or many.
func TestServerEditsRefuseInlineArrays(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"[mcp]\nservers = [ {name=\"x\", command=\"echo\"}, {name=\"mem\", command=\"echo\"} ]\n",
		"# mine\nmcp.servers = [\n  {name=\"x\", command=\"echo\"},\n  {name=\"mem\", command=\"echo\"},\n]\n",
	} {
		f := writeTemp(t, text)
		for what, edit := range map[string]func() error{
			"disable": func() error { return SetServerEnabled(f, "x", false) },
			"enable":  func() error { return SetServerEnabled(f, "mem", true) },
			"remove":  func() error { return RemoveServer(f, "mem") },
			"add":     func() error { return AddServer(f, Server{Name: "y", Command: "echo"}) },
		} {
			err := edit()
			if !errors.Is(err, ErrInlineServers) || !strings.HasPrefix(err.Error(), f+":") {
				t.Errorf("%s in %q: %v", what, text, err)
			}
			if read(t, f) != text {
				t.Fatalf("%s changed the file to\n%s", what, read(t, f))
			}
		}
	}
}

// TestWriteEditedRefusesAnyOtherChange: the last guard of every edit
// refuses a text whose servers or other settings differ from what was asked.
func TestWriteEditedRefusesAnyOtherChange(t *testing.T) {
	t.Parallel()
	before := "[mcp]\nauto_reload = true\n\n[[mcp.servers]]\nname = \"a\"\ncommand = \"a\"\n\n[[mcp.servers]]\nname = \"b\"\ncommand = \"b\"\n"
	removeA := func(old []map[string]any) ([]map[string]any, error) { return slices.Delete(old, 0, 1), nil }
	f := writeTemp(t, before)
	for _, after := range []string{
		"[mcp]\nauto_reload = true\n", // b went too
		"[mcp]\nenabled = false\n\n[[mcp.servers]]\nname = \"b\"\ncommand = \"b\"\n", // a setting changed
	} {
		if err := writeEdited(f, before, after, "remove server a", removeA); err == nil || !strings.Contains(err.Error(), "change more than that") {
			t.Errorf("writing %q: %v", after, err)
		}
		if read(t, f) != before {
			t.Fatal("a refused edit changed the file")
		}
	}
	if err := writeEdited(f, before, "[mcp]\nauto_reload = true\n\n[[mcp.servers]]\nname = \"b\"\ncommand = \"b\"\n", "remove server a", removeA); err != nil {
		t.Error(err)
	}
}
