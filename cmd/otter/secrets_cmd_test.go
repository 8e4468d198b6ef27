package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// leakyServer is the TOML of a stdio server that echoes the secrets its
// configuration hands it (env values, the values of secret-looking flags)
// to stderr and exits before answering initialize.
const leakyServer = `
[[mcp.servers]]
name = "leaky"
command = "sh"
args = ["-c", "echo \"starting with token=$API_TOKEN and pw=$DB_PASSWORD\" >&2; echo \"argv: $*\" >&2; exit 3", "leaky", "--api-key", "argsecret123456", "--token=flagsecret98765"]
[mcp.servers.env]
API_TOKEN = "supersecrettoken42"
DB_PASSWORD = "hunter2hunter2"
`

// leakySecrets are the secrets leakyServer is handed: its env values and
// its secret-looking flags' values (which `otter config show` masks).
var leakySecrets = []string{"supersecrettoken42", "hunter2hunter2", "argsecret123456", "flagsecret98765"}

// wantMasked fails when out shows one of secrets, or shows no "****" where
// they were.
func wantMasked(t *testing.T, what, out string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("%s shows the secret %q:\n%s", what, s, out)
		}
	}
	if !strings.Contains(out, "****") {
		t.Errorf("%s: no **** where the secrets were:\n%s", what, out)
	}
}

// TestFailedServerSecretsAreMaskedEverywhere: a server that echoes its
// secrets on stderr and fails to start has them masked in every message
// otter prints about it — `otter -p` with an @-mention of it (text and
// JSON, stdout and stderr), `otter mcp list` (table and --json) and `otter
// mcp call`. (Before, the mention's error carried the server's stderr in
// clear while the other messages masked it, and every message showed the
// echoed --api-key and --token values in clear.)
func TestFailedServerSecretsAreMaskedEverywhere(t *testing.T) {
	configTestHome(t)
	work := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"hi"}})
	cfg := promptConfig(t, model, leakyServer)
	for _, format := range []string{"text", "json"} {
		stdout, stderr, err := runOtter(t, "--cwd", work, "--config", cfg, "-p", "see @leaky:foo://bar", "--output-format", format)
		wantExit(t, err, 2)
		wantMasked(t, fmt.Sprintf("otter -p --output-format %s (stdout, stderr, error)", format),
			stdout+"\n"+stderr+"\n"+err.Error(), leakySecrets)
	}
	for _, args := range [][]string{{"mcp", "list"}, {"mcp", "list", "--json"}, {"mcp", "call", "leaky", "foo"}} {
		stdout, stderr, err := runOtter(t, append([]string{"--cwd", work, "--config", cfg}, args...)...)
		out := stdout + "\n" + stderr
		if err != nil {
			out += "\n" + err.Error()
		}
		wantMasked(t, "otter "+strings.Join(args, " "), out, leakySecrets)
	}
}

// TestAdhocServerURLSecretsAreMasked: `otter mcp call --url` names the ad
// hoc server by its URL in its messages, with the password and the
// api_key masked — for a server that cannot be reached and for a live one.
// (Before, "MCP server http://user:pw…@…?api_key=… failed" was printed.)
func TestAdhocServerURLSecretsAreMasked(t *testing.T) {
	configTestHome(t)
	const pw, key = "pw123456789", "cliquerysecret1"
	live := strings.TrimPrefix(httpToolServer(t, "adhoc", "echo"), "http://")
	for _, host := range []string{"127.0.0.1:1", live} {
		u := "http://user:" + pw + "@" + host + "/mcp?api_key=" + key
		_, stderr, err := runOtter(t, "--cwd", t.TempDir(), "mcp", "call", "--url", u, "foo")
		wantExit(t, err, 2)
		out := stderr + "\n" + err.Error()
		wantMasked(t, "otter mcp call --url "+host, out, []string{pw, key})
		if !strings.Contains(out, "MCP server http://user:****@"+host+"/mcp?api_key=****") {
			t.Errorf("otter mcp call --url %s does not name the server by its masked URL:\n%s", host, out)
		}
	}
}

// TestShortURLSecretsAreMaskedByStructure: a server whose URL carries short
// secrets — a four-letter password, token=t0K, code=xyz12, api_key=k1Z —
// has each of them masked wherever otter prints or logs the URL: `mcp list`
// (table and --json), `mcp get` (and --json), `config show`, `mcp call`,
// the errors of `-p` and otter.log; and so has an ad hoc server named by
// such a URL. (Before, masking replaced known values of six characters or
// more: the URL was printed whole in the errors, and code= by `mcp get`,
// `config show` and in the ad hoc server's name.)
func TestShortURLSecretsAreMaskedByStructure(t *testing.T) {
	configTestHome(t)
	work := t.TempDir()
	const u = "http://user:pw9Q@127.0.0.1:1/mcp?token=t0K&code=xyz12&api_key=k1Z"
	short := []string{"pw9Q", "t0K", "xyz12", "k1Z"}
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"hi"}})
	cfg := promptConfig(t, model, "[[mcp.servers]]\nname = \"remote\"\nurl = \""+u+"\"\ntransport = \"http\"\n")
	logFile := filepath.Join(t.TempDir(), "otter.log")
	for _, args := range [][]string{
		{"mcp", "list"}, {"mcp", "list", "--json"}, {"mcp", "get", "remote"}, {"mcp", "get", "remote", "--json"},
		{"config", "show"}, {"mcp", "call", "remote", "foo"}, {"-p", "hi", "--log-file", logFile, "--log-level", "debug"},
		{"mcp", "call", "--url", u, "foo"}, {"mcp", "tools", "--url", u},
	} {
		stdout, stderr, err := runOtter(t, append([]string{"--cwd", work, "--config", cfg}, args...)...)
		out := stdout + "\n" + stderr
		if err != nil {
			out += "\n" + err.Error()
		}
		wantMasked(t, "otter "+strings.Join(args, " "), out, short)
	}
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "127.0.0.1:1") {
		t.Errorf("otter.log does not mention the server's URL, so it tests nothing:\n%s", log)
	}
	wantMasked(t, "otter.log", string(log), short)
}
