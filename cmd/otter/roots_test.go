package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/testpeer"
)

// `roots = []` offers a server no roots, so server-filesystem keeps the
// directory on its command line instead of taking the working directory
// otter offers by default (QA: "Access denied … not in <working dir>").
func TestServerRoots(t *testing.T) {
	configTestHome(t)
	node, servers := testpeer.ReferenceServers(t, "")
	var fsEntry string
	for _, s := range servers {
		if s.Name == "filesystem" {
			fsEntry = s.Args[0]
		}
	}
	work, argDir := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, text := range map[string]string{
		filepath.Join(argDir, "a.txt"):        "from the command line's directory",
		filepath.Join(work, "notes", "b.txt"): "from a configured root",
	} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := ""
	for name, roots := range map[string]string{"fsargs": "roots = []\n"} {
		cfg += fmt.Sprintf("[[mcp.servers]]\nname = %q\ncommand = %q\nargs = [%q, %q]\n%s\n", name, node, fsEntry, argDir, roots)
	}
	cfgFile := filepath.Join(t.TempDir(), "otter.toml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	read := func(server, path string) (string, error) {
		out, errOut, err := runOtter(t, "--cwd", work, "--config", cfgFile, "mcp", "call", server, "read_text_file", fmt.Sprintf(`{"path":%q}`, path))
		return out + errOut, err
	}
	if out, err := read("fsargs", filepath.Join(argDir, "a.txt")); err != nil || !strings.Contains(out, "from the command line's directory") {
		t.Errorf("roots = []: the server does not serve the directory on its command line: %v\n%s", err, out)
	}
	// (Whether a server takes the roots it is offered, and when, is up to
	// it: server-filesystem asks for them after initialize, while a call
	// may already run; internal/mcphost's TestServerRootsAreOffered waits.)
}
