package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/cli"
	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// TestServerWithMissingVariable: one server's ${VAR} is not set. otter
// still starts: that server is failed with the reason (the variable, the
// server, file:line, what to do) and the others work; `otter config
// validate` reports it as a config error; `otter config show` marks it.
func TestServerWithMissingVariable(t *testing.T) {
	node, server := everythingPeer(t)
	paths := configTestHome(t)
	const unset = "OTTER_TEST_UNSET_GITHUB_TOKEN"
	t.Setenv(unset, "")
	os.Unsetenv(unset) // restored by t.Setenv's cleanup
	work := t.TempDir()
	file := paths.UserConfigFile()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`[[mcp.servers]]
name = "everything"
command = %q
args = [%q, "stdio"]

[[mcp.servers]]
name = "github"
command = "github-mcp-server-otter-test"
env = { GITHUB_TOKEN = "${%s}" }
`, node, server, unset)
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	reason := fmt.Sprintf(`%s:9: server "github": environment variable %s is not set (in env.GITHUB_TOKEN) (set %s in the environment or write ${%s:-default}, or set enabled = false on the server)`,
		file, unset, unset, unset)

	// otter mcp list: exit 0, everything connected, github failed with the reason.
	out, errOut, err := runOtter(t, "--cwd", work, "mcp", "list", "--json")
	if err != nil {
		t.Fatalf("otter mcp list --json: %v\n%s", err, errOut)
	}
	var rows []cli.ServerJSON
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("list output %q: %v", out, err)
	}
	got := map[string]cli.ServerJSON{}
	for _, r := range rows {
		got[r.Name] = r
	}
	if ev := got["everything"]; ev.State != "connected" || ev.Tools == 0 {
		t.Errorf("everything = %+v, want connected with tools", ev)
	}
	if gh := got["github"]; gh.State != "failed" || gh.Error != reason || gh.Tools != 0 {
		t.Errorf("github = %+v\nwant failed with %q", gh, reason)
	}

	// otter mcp call on it: exit 2, the reason in the error main prints.
	_, _, err = runOtter(t, "--cwd", work, "mcp", "call", "github", "get_me")
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), "MCP server github failed: "+reason) {
		t.Errorf("call error = %v, want the reason", err)
	}

	// otter -p works, with the other server's tools, and says why github is missing.
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"hi"}})
	provider := promptConfig(t, model, "")
	stdout, stderr, err := otterWithStdin(t, strings.NewReader(""), "--cwd", work, "--config", provider, "-p", "hello")
	if err != nil || stdout != "hi\n" {
		t.Fatalf("otter -p: %q, %v\nstderr:\n%s", stdout, err, stderr)
	}
	if !strings.Contains(stderr, "otter: MCP server github failed: "+reason) {
		t.Errorf("otter -p stderr does not say why github is missing:\n%s", stderr)
	}
	if reqs := model.Requests(); len(reqs) != 1 || !strings.Contains(strings.Join(reqs[0].Tools, " "), "mcp__everything__") {
		t.Errorf("the model was not offered the everything server's tools: %+v", reqs)
	}

	// otter config validate: a config error, exit 2, the same message.
	_, _, err = runOtter(t, "--cwd", work, "config", "validate")
	wantExit(t, err, 2)
	if want := "invalid configuration: " + reason; err.Error() != want {
		t.Errorf("validate error = %q\nwant %q", err, want)
	}
	_, _, err = runOtter(t, "config", "validate", file)
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), reason) {
		t.Errorf("validate FILE error = %q, want %q", err, reason)
	}

	// otter mcp login on it refuses instead of using the unexpanded text.
	_, _, err = runOtter(t, "--cwd", work, "mcp", "login", "github")
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), `cannot log in to "github" until its configuration is fixed: `+reason) {
		t.Errorf("login error = %v", err)
	}

	// otter config show: exit 0, the server marked with its problem.
	out, _, err = runOtter(t, "--cwd", work, "config", "show")
	if err != nil {
		t.Fatalf("config show: %v", err)
	}
	if want := "# github: user scope, " + file + ":6\n# problem: " + reason + "\n[[mcp.servers]]\nname = \"github\""; !strings.Contains(out, want) {
		t.Errorf("config show lacks\n%s\nin:\n%s", want, out)
	}

	// With the variable set, validate is happy again.
	t.Setenv(unset, "tok")
	out, _, err = runOtter(t, "--cwd", work, "config", "validate")
	if err != nil || !strings.HasPrefix(out, "ok: 2 servers from "+file) {
		t.Errorf("validate with the variable set: %q, %v", out, err)
	}
}
