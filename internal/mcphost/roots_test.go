package mcphost

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/render"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/testpeer"
)

// A server's own roots = [...] are what it is offered, in place of the
// working directory: server-filesystem, which asks for its roots after
// initialize, then serves that directory and no longer the one on its
// command line.
func TestServerRootsAreOffered(t *testing.T) {
	argDir, rootDir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(rootDir, "b.txt"), []byte("from a configured root"), 0o644); err != nil {
		t.Fatal(err)
	}
	node, refs := testpeer.ReferenceServers(t, argDir)
	var fs config.Server
	for _, r := range refs {
		if r.Name == "filesystem" {
			fs = config.Server{Name: "fs", Command: node, Args: r.Args, Roots: []string{rootDir}}
		}
	}
	h := newHarness(t, configOf(fs), servers.Options{Roots: []string{t.TempDir()}})
	h.m.Start(context.Background())
	h.waitState("fs", servers.StateConnected)
	args := `{"path":"` + filepath.Join(rootDir, "b.txt") + `"}`
	deadline := time.Now().Add(liveness)
	for {
		res, err := h.call(context.Background(), "fs", "read_text_file", args)
		if err == nil && !res.IsError && strings.Contains(render.Model(res), "from a configured root") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never served its configured root %s: %v %s", rootDir, err, render.Model(res))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
