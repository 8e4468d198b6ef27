package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProjectConfigInANarrowTerminal runs the real binary at 60 columns in
// a project whose .otter/config.toml is first broken, then fixed:
//   - the broken, untrusted file is left out (the user's own config still
//     loads), and the transcript says so with the file and line, instead of
//     a silent "0/0 servers";
//   - once fixed, /mcp reload drops the warning and /trust lists the
//     server's command with its long path whole (broken after a "/", never
//     inside a name) and indented under the server's name.
func TestProjectConfigInANarrowTerminal(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "work", ".otter")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	projFile := filepath.Join(proj, "config.toml")
	// A common slip: one bracket pair, so mcp.servers is a table.
	if err := os.WriteFile(projFile, []byte("[mcp.servers.fs]\ncommand = \"node\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startTmux(t, dir, "", 60, 30)
	s := p.waitFor("/help", "config: ")
	flat := strings.Join(strings.Fields(s), " ")
	for _, want := range []string{"work/.otter/config.toml:", "must be an array", "[[mcp.servers]]", "untrusted project file"} {
		if !strings.Contains(strings.ReplaceAll(flat, " ", ""), strings.ReplaceAll(want, " ", "")) {
			t.Errorf("the warning about the broken project file does not say %q:\n%s", want, s)
		}
	}

	long := "/opt/example-org/mcp-servers/packages/filesystem-server/dist/bin/server.js"
	fixed := "[[mcp.servers]]\nname = \"fs\"\ncommand = \"node\"\nargs = [\"" + long + "\", \"--root\", \"/tmp\"]\n"
	if err := os.WriteFile(projFile, []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	p.keys("/clear", "Enter")
	p.waitGone("must be an array")
	p.keys("/mcp reload", "Enter")
	s = p.waitFor("config reloaded")
	if strings.Contains(s, "config: ") {
		t.Errorf("a warning stays after the file was fixed:\n%s", s)
	}
	p.keys("/trust", "Enter")
	s = p.waitFor("Trust this directory?", "fs: node")
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(l, "│ "); ok {
			lines = append(lines, strings.TrimSuffix(strings.TrimRight(rest, " "), "│"))
		}
	}
	text := strings.Join(lines, "\n")
	for _, name := range append(strings.Split(strings.Trim(long, "/"), "/"), "--root") {
		if !strings.Contains(text, name) {
			t.Errorf("at 60 columns %q is cut in the trust prompt:\n%s", name, s)
		}
	}
	first := -1
	for i, l := range lines {
		if strings.Contains(l, "fs: node") {
			first = i
		}
		if first >= 0 && i > first && strings.TrimSpace(l) != "" {
			if !strings.HasPrefix(l, "    ") {
				break // the server's lines have ended
			}
		}
	}
	if first < 0 || !strings.HasPrefix(lines[first+1], "    ") {
		t.Errorf("the fs entry's command does not go on indented under it:\n%s", s)
	}
	p.keys("Escape")
	p.waitFor("is not trusted")
}
