package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// Issue 28, walk 9: server-filesystem replaces the directories of its
// command line with the MCP roots otter offers (the working directory,
// by default), so it refuses its own directory ("Access denied … not in
// <working dir>"). `otter mcp add --roots DIR,…` and `--no-roots` choose
// a server's roots; /mcp shows each server's, so the person sees why.
func TestServerRootsChosenByMCPAddAndShownInMCP(t *testing.T) {
	dir := t.TempDir()
	node, servers := testpeer.ReferenceServers(t, "")
	var fsEntry string
	for _, s := range servers {
		if s.Name == "filesystem" {
			fsEntry = s.Args[0]
		}
	}
	model := llmtest.New(t, llmtest.OpenAI)
	p := startTmux(t, dir, fakeModelConfig(model.URL), 120, 40)
	p.waitFor("fake/fake-model", "0/0 servers")
	own := filepath.Join(dir, "own") // the directory on the servers' command lines
	notes := filepath.Join(p.work, "notes")
	for _, d := range []string{own, notes} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// A relative --roots is made absolute; --roots with --no-roots, and a
	// directory that is not there, are refused.
	p.prompt("mcp", "add", "fsdefault", "--", node, fsEntry, own)
	p.prompt("mcp", "add", "--roots", "notes", "fsroots", "--", node, fsEntry, own)
	p.prompt("mcp", "add", "--no-roots", "fsargs", "--", node, fsEntry, own)
	for _, args := range [][]string{
		{"--roots", "notes", "--no-roots"},
		{"--roots", "no-such-dir"},
	} {
		_, stderr, err := p.run(append(append([]string{"mcp", "add"}, args...), "bad", "--", node, fsEntry, own)...)
		if err == nil || !strings.Contains(stderr, "--roots") {
			t.Errorf("otter mcp add %q: %v, stderr %q; want it refused, naming --roots", args, err, stderr)
		}
	}
	cfg, err := os.ReadFile(p.cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), fmt.Sprintf("roots = [%q]", notes)) || !strings.Contains(string(cfg), "roots = []") || strings.Contains(string(cfg), `"bad"`) {
		t.Errorf("the config file otter mcp add wrote:\n%s", cfg)
	}

	p.keys("/mcp reload", "Enter")
	p.waitFor("3/3 servers")
	p.keys("/mcp", "Enter")
	p.waitFor("MCP servers", "fsargs", "roots: none offered (it keeps the directories it was started with)") // the first, selected
	p.keys("Down")
	p.waitFor("roots: " + p.work + " (the working directory, by default")
	p.keys("Down")
	p.waitFor("roots: " + notes)
	p.keys("Escape")
	p.waitGone("3/3 connected") // the panel's title

	// What the server makes of them.
	p.keys("/call mcp__fsargs__list_allowed_directories", "Enter")
	p.waitFor("Allowed directories:", own)
	p.keys("/call mcp__fsroots__list_allowed_directories", "Enter")
	s := p.waitFor("Allowed directories:", notes)
	t.Logf("\n%s", s)
}
