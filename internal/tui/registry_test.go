package tui

import (
	"os"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/registry/registrytest"
)

// /mcp search finds servers of the MCP Registry; enter on one asks what
// it needs in a form — the filesystem server's required, repeated
// directory — and writes the entry, then reloads the configuration. A
// server with a package and a remote asks how it runs first, and names
// the environment variable its secret header is read from.
func TestRegistrySearchAndAdd(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t)
	b := &fakeHost{config: "\n[mcp]\nregistry = \"" + reg.URL + "\"\n"}
	h := start(t, b)
	h.enterLine("/mcp search filesystem")
	h.waitFor("MCP Registry", "io.github.modelcontextprotocol/server-filesystem", "0.6.3 · npm")
	h.press("enter")
	h.waitFor("add io.github.modelcontextprotocol/server-filesystem 0.6.3", "Name in the config", "argument allowed_directory *")
	h.press("enter", "enter") // the name (filesystem), the user's file
	h.typeText("/srv/a, /srv/b")
	h.press("enter")
	h.waitFor("added filesystem to ")
	if !b.waitDid("reload") {
		t.Error("adding a server did not reload the configuration")
	}
	file := b.app.Paths.UserConfigFile()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `args = ["-y", "@modelcontextprotocol/server-filesystem@0.6.3", "/srv/a", "/srv/b"]`) {
		t.Errorf("the config file:\n%s", data)
	}

	// From /mcp: + opens the search.
	h.enterLine("/mcp")
	h.waitFor("+ add")
	h.press("+")
	h.waitFor("search the MCP Registry")
	h.typeText("github-mcp")
	h.press("enter")
	h.waitFor("io.github.github/github-mcp-server", "oci, remote")
	h.press("enter")
	h.waitFor("How it runs", "remote (streamable-http) https://api.githubcopilot.com/mcp/")
	h.press("down", "enter")
	h.waitFor("add io.github.github/github-mcp-server", "header Authorization: read from $GITHUB_AUTHORIZATION")
	h.press("enter", "enter")
	h.waitFor("added github to ")
	data, _ = os.ReadFile(file)
	if !strings.Contains(string(data), `url = "https://api.githubcopilot.com/mcp/"`) {
		t.Errorf("the config file:\n%s", data)
	}
}
