package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/testpeer"
)

// TestServerGetsNoSecretsFromOtter: a stdio server (the reference
// everything server, its get-env tool printing process.env) started by the
// real binary sees none of the keys and tokens in otter's environment, and
// sees what it needs (PATH, HOME, the locale, a proxy setting) and what its
// env table passes on purpose. Before, `OPENAI_API_KEY=… otter mcp call
// everything get-env '{}'` printed the key.
func TestServerGetsNoSecretsFromOtter(t *testing.T) {
	p := testpeer.Require(t)
	node, server := p.Node, p.Everything
	bin := testpeer.Otter(t)
	home := t.TempDir()
	cfg := filepath.Join(home, "otter.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`[[mcp.servers]]
name = "everything"
command = %q
args = [%q, "stdio"]
env = { PASSED_ON_PURPOSE = "${OTTER_TEST_PASS}" }
`, node, server)), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "OTTER_TEST_PASS", "NPM_TOKEN"}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LC_ALL=C.UTF-8", "NO_PROXY=example.internal",
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"XDG_DATA_HOME=" + filepath.Join(home, "data"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache")}
	for _, name := range secrets {
		env = append(env, name+"=value-of-"+strings.ToLower(name))
	}
	cmd := exec.Command(bin, "--config", cfg, "--cwd", home, "mcp", "call", "everything", "get-env", "{}")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("otter mcp call everything get-env: %v\n%s", err, out)
	}
	got := string(out)
	for _, name := range secrets {
		if strings.Contains(got, name) {
			t.Errorf("the server saw %s from otter's environment:\n%s", name, got)
		}
	}
	for _, want := range []string{`"PASSED_ON_PURPOSE": "value-of-otter_test_pass"`, `"LC_ALL": "C.UTF-8"`, `"NO_PROXY": "example.internal"`, `"HOME": "` + home + `"`, `"PATH": "`} {
		if !strings.Contains(got, want) {
			t.Errorf("the server's environment lacks %s:\n%s", want, got)
		}
	}
}
