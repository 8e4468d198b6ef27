package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/registry/registrytest"
)

// registryHome is a temporary home whose user config names the test
// registry reg; it returns the user config file.
func registryHome(t *testing.T, reg *registrytest.Server) string {
	t.Helper()
	paths := configTestHome(t)
	file := paths.UserConfigFile()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("[mcp]\nregistry = \""+reg.URL+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestMCPSearch: `otter mcp search` lists the registry's servers whose
// names hold the query, following its pages (two servers a page here);
// --json gives each with the ways otter can run it and its config name.
func TestMCPSearch(t *testing.T) {
	reg := registrytest.New(t)
	registryHome(t, reg)
	out, stderr, err := runOtter(t, "mcp", "search", "modelcontextprotocol")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[1], "io.github.modelcontextprotocol/server-everything  2.0.0") ||
		!strings.Contains(lines[3], "server-time") || !strings.Contains(lines[3], "pypi") {
		t.Errorf("otter mcp search modelcontextprotocol:\n%s", out)
	}
	if !strings.Contains(stderr, "otter mcp add NAME --from-registry") {
		t.Errorf("stderr does not say how to add one:\n%s", stderr)
	}
	if reqs := reg.Requests(); len(reqs) != 2 || !strings.Contains(reqs[1], "cursor=") {
		t.Errorf("registry requests %q: want two pages", reqs)
	}

	out, stderr, err = runOtter(t, "mcp", "search", "github", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var found []struct {
		Name      string
		LocalName string `json:"local_name"`
		Ways      []struct{ Kind, Unsupported string }
	}
	if err := json.Unmarshal([]byte(out), &found); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	// io.github.* matches every name: the search is a substring of the name.
	i := slices.IndexFunc(found, func(f struct {
		Name      string
		LocalName string `json:"local_name"`
		Ways      []struct{ Kind, Unsupported string }
	}) bool {
		return f.Name == "io.github.github/github-mcp-server"
	})
	if len(found) != 5 || i < 0 || found[i].LocalName != "github" || len(found[i].Ways) != 2 || found[i].Ways[0].Kind != "oci" || found[i].Ways[1].Kind != "remote" {
		t.Errorf("--json: %+v", found)
	}
}

// TestMCPAddFromRegistry: `otter mcp add NAME --from-registry` writes the
// entry the published server.json describes (npx -y PKG@VERSION), under
// a short name or --as; a required argument is asked for and given with
// --arg; a secret is written as a ${VAR} reference and refused as a value;
// a remote is chosen with --remote; the file keeps a comment naming the
// registry's server.
func TestMCPAddFromRegistry(t *testing.T) {
	reg := registrytest.New(t)
	file := registryHome(t, reg)
	read := func() string {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}

	out, stderr, err := runOtter(t, "mcp", "add", "everything", "--from-registry")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(out, `Added MCP server "everything"`) || !strings.Contains(stderr, "sandbox") {
		t.Errorf("stdout %q, stderr %q", out, stderr)
	}
	got, _, err := runOtter(t, "mcp", "get", "everything", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var entry struct {
		Command string
		Args    []string
		Env     map[string]string
		URL     string
		Headers map[string]string
	}
	if err := json.Unmarshal([]byte(got), &entry); err != nil || entry.Command != "npx" ||
		!slices.Equal(entry.Args, []string{"-y", "@modelcontextprotocol/server-everything@2.0.0", "stdio"}) {
		t.Errorf("the everything entry: %+v (%v)\n%s", entry, err, read())
	}
	if !strings.Contains(read(), "# From the MCP Registry: io.github.modelcontextprotocol/server-everything 2.0.0") {
		t.Errorf("the file has no comment naming the registry's server:\n%s", read())
	}

	_, _, err = runOtter(t, "mcp", "add", "filesystem", "--from-registry")
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), "--arg allowed_directory=FILEPATH") || !strings.Contains(err.Error(), "repeat it for more") {
		t.Errorf("a missing argument: %v", err)
	}
	if _, stderr, err := runOtter(t, "mcp", "add", "filesystem", "--from-registry", "--as", "notes", "--arg", "allowed_directory=/srv/notes", "--arg", "allowed_directory=/srv/more"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	got, _, _ = runOtter(t, "mcp", "get", "notes", "--json")
	if err := json.Unmarshal([]byte(got), &entry); err != nil || !slices.Equal(entry.Args, []string{"-y", "@modelcontextprotocol/server-filesystem@0.6.3", "/srv/notes", "/srv/more"}) {
		t.Errorf("the notes entry: %+v", entry)
	}

	_, _, err = runOtter(t, "mcp", "add", "io.github.brave/brave-search-mcp-server", "--from-registry", "--env", "BRAVE_API_KEY=sk-secret")
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), "is a secret") || strings.Contains(read(), "sk-secret") {
		t.Errorf("a secret's value given: %v\n%s", err, read())
	}
	t.Setenv("BRAVE_API_KEY", "")
	os.Unsetenv("BRAVE_API_KEY")
	_, stderr, err = runOtter(t, "mcp", "add", "brave-search", "--from-registry")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(read(), `BRAVE_API_KEY = "${BRAVE_API_KEY}"`) || !strings.Contains(stderr, "reads env BRAVE_API_KEY from $BRAVE_API_KEY (not set now)") {
		t.Errorf("brave-search: stderr %q\n%s", stderr, read())
	}

	if _, stderr, err := runOtter(t, "mcp", "add", "github", "--from-registry", "--remote"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	got, _, _ = runOtter(t, "mcp", "get", "github", "--json")
	if err := json.Unmarshal([]byte(got), &entry); err != nil || entry.URL != "https://api.githubcopilot.com/mcp/" {
		t.Errorf("the github remote: %+v", entry)
	}
	_, _, err = runOtter(t, "mcp", "add", "github", "--from-registry")
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), `a server named "github" is already defined`) {
		t.Errorf("adding a name twice: %v", err)
	}
	_, _, err = runOtter(t, "mcp", "add", "nothing-like-it", "--from-registry")
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), `has no server called "nothing-like-it"`) {
		t.Errorf("an unknown server: %v", err)
	}
}

// TestMCPSearchOffline: with the registry gone, a search made before is
// answered from the cache and stderr says so; a server seen before can
// still be added; a search never made finds what the cached answers hold;
// with nothing cached the error names the registry and says what to check.
func TestMCPSearchOffline(t *testing.T) {
	reg := registrytest.New(t)
	reg.CacheControl = "no-cache" // kept, but asked again each time
	registryHome(t, reg)
	if _, stderr, err := runOtter(t, "mcp", "search", "brave"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	reg.Close()
	out, stderr, err := runOtter(t, "mcp", "search", "brave")
	if err != nil || !strings.Contains(out, "io.github.brave/brave-search-mcp-server") ||
		!strings.Contains(stderr, "the MCP Registry at "+reg.URL+" cannot be reached") || !strings.Contains(stderr, "(cached)") {
		t.Fatalf("offline search: %v\n%s%s", err, out, stderr)
	}
	_, stderr, err = runOtter(t, "mcp", "add", "brave-search", "--from-registry")
	if err != nil {
		t.Fatalf("offline add: %v\n%s", err, stderr)
	}
	_, _, err = runOtter(t, "mcp", "search", "zzz")
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), "the MCP Registry at "+reg.URL+" cannot be reached") || !strings.Contains(err.Error(), "[mcp] registry") {
		t.Errorf("offline with nothing cached: %v", err)
	}
}
