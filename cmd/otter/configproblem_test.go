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
	"github.com/otter-sh/otter/internal/testpeer"
)

// TestServerWithMissingVariable: one server's ${VAR} is not set. otter
// still starts: that server is failed with the reason (the variable, the
// server, file:line, what to do) and the others work; `otter config
// validate` reports it as a config error; `otter config show` marks it.
func TestServerWithMissingVariable(t *testing.T) {
	peers := testpeer.Require(t)
	paths := configTestHome(t)
	const unset = "OTTER_TEST_UNSET_GITHUB_TOKEN"
	t.Setenv(unset, "")
	os.Unsetenv(unset) // restored by t.Setenv's cleanup
	work := t.TempDir()
	file := paths.UserConfigFile()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := peers.EverythingConfig() + fmt.Sprintf(`
[[mcp.servers]]
name = "github"
command = "github-mcp-server-otter-test"
env = { GITHUB_TOKEN = "${%s}" }
`, unset)
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	reason := fmt.Sprintf(`%s:9: server "github": environment variable %s is not set (in env.GITHUB_TOKEN) (set %s in the environment or write ${%s:-default}, or set enabled = false on the server)`,
		file, unset, unset, unset)

	// otter mcp list: everything connected, github failed with the reason;
	// exit 1, since a server did not connect.
	out, _, err := runOtter(t, "--cwd", work, "mcp", "list", "--json")
	wantExit(t, err, 1)
	// main prints the error on stderr; run in-process, it is returned.
	if msg := explained(err); !strings.Contains(msg, "github (failed)") {
		t.Errorf("the error does not name the server that failed: %q", msg)
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
	// A window the size of a hosted model's, so that the server's 16 tools
	// fit the request budget and are offered whole, not behind tool_search.
	provider := promptConfig(t, model, "context_window = 200000\n")
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

// TestMissingProviderKeyFailsOnlyWhatUsesTheModel: the provider's api_key
// names a variable that is not set. What does not use the model works —
// `otter mcp list`, `mcp call`, `mcp serve`, `config show` (which notes the
// problem) — while `otter -p` and `otter config validate` exit 2 naming
// the variable, the file and the line. (Before, every command failed to
// load the configuration.)
func TestMissingProviderKeyFailsOnlyWhatUsesTheModel(t *testing.T) {
	configTestHome(t)
	const unset = "OTTER_TEST_MISSING_PROVIDER_KEY"
	t.Setenv(unset, "")
	os.Unsetenv(unset) // restored by t.Setenv's cleanup
	work := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"hi"}})
	file := filepath.Join(t.TempDir(), "otter.toml")
	cfg := fmt.Sprintf(`[agent]
provider = "fake"
model = "fake-model"

[providers.fake]
type = "openai"
base_url = %q
api_key = "${%s}"

[[mcp.servers]]
name = "ts"
url = %q
`, model.URL, unset, sumServer(t))
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	reason := fmt.Sprintf("%s:8: environment variable %s is not set (in providers.fake.api_key)", file, unset)
	run := func(stdin string, args ...string) (string, string, error) {
		return otterWithStdin(t, strings.NewReader(stdin), append([]string{"--cwd", work, "--config", file}, args...)...)
	}

	if out, errOut, err := run("", "mcp", "list"); err != nil || !strings.Contains(out, "ts") || strings.Contains(errOut, unset) {
		t.Errorf("otter mcp list: %v, want it to work and say nothing of the provider\n%s%s", err, out, errOut)
	}
	if out, errOut, err := run("", "mcp", "call", "ts", "sum", `{"a":2,"b":3}`); err != nil || !strings.Contains(out, "sum: ") {
		t.Errorf("otter mcp call: %v\n%s%s", err, out, errOut)
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n"
	if out, errOut, err := run(initialize, "mcp", "serve"); err != nil || !strings.Contains(out, `"id":1,"result"`) {
		t.Errorf("otter mcp serve: %v\n%s%s", err, out, errOut)
	}
	out, errOut, err := run("", "config", "show")
	if err != nil || !strings.Contains(out, "# problem: [providers.fake]: "+reason) {
		t.Errorf("otter config show: %v, want it to note %q\n%s%s", err, reason, out, errOut)
	}

	_, _, err = run("", "-p", "hello")
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), reason) {
		t.Errorf("otter -p: %v, want %q", err, reason)
	}
	if n := len(model.Requests()); n != 0 {
		t.Errorf("the model got %d requests", n)
	}
	_, _, err = run("", "config", "validate")
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), reason) {
		t.Errorf("otter config validate: %v, want %q", err, reason)
	}
}
