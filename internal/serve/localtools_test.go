package serve

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/localtools"
)

// otter mcp serve never offers the tools for the project (read_file …
// run_command): a client of the server is not the person at the
// terminal, and they would hand it the project and a shell. [tools]
// local = true, the default, changes nothing here, and serve does not
// even link the package in.
func TestServeNeverOffersTheLocalTools(t *testing.T) {
	dir := t.TempDir()
	paths := config.Paths{ConfigDir: filepath.Join(dir, "config"), DataDir: filepath.Join(dir, "data"),
		StateDir: filepath.Join(dir, "state"), CacheDir: filepath.Join(dir, "cache")}
	if err := os.MkdirAll(paths.ConfigDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(paths.UserConfigFile(), []byte("[tools]\nlocal = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := FromConfig(ConfigOptions{Load: config.LoadOptions{Paths: paths, WorkDir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	names := s.toolNames()
	if len(names) == 0 {
		t.Fatal("the server offers no tool at all")
	}
	for _, n := range localtools.Names {
		if slices.Contains(names, n) {
			t.Errorf("otter mcp serve offers %s: %q", n, names)
		}
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/otter-sh/otter/internal/serve").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "internal/localtools") {
		t.Error("internal/serve links in internal/localtools")
	}
}
