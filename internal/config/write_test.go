package config

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestWriteResolvedMasksSecretsAndNamesSources(t *testing.T) {
	paths, proj := testEnv(t)
	const (
		bearer    = "Bearer ghp_abcdefghijklmnop1234"
		apiKey    = "sk-ant-0123456789abcdefWXYZ"
		shortKey  = "tiny"
		secretEnv = "s3cr3t-value-long-enough-9876"
		serveKey  = "serve-key-0123456789-QRST"
		clientSec = "client-secret-0123456789-LMNO"
	)
	userFile := writeFile(t, paths.UserConfigFile(), `
[agent]
provider = "anthropic"

[providers.anthropic]
api_key = "`+apiKey+`"

[providers.other]
api_key = "`+shortKey+`"
base_url = "https://user:hunter2hunter2@llm.example.com/v1"

[serve]
api_keys = ["`+serveKey+`"]

[[mcp.servers]]
name = "api"
url = "https://mcp.example.com/mcp?api_key=query-secret-0123456789&x=1"
headers = { Authorization = "`+bearer+`" }
[mcp.servers.oauth]
client_id = "public-client"
client_secret = "`+clientSec+`"
`)
	writeFile(t, filepath.Join(proj, MCPJSONName), `{"mcpServers": {"proj": {"command": "p", "args": ["--token", "`+secretEnv+`", "--verbose"], "env": {"GITHUB_TOKEN": "`+secretEnv+`", "LOG_LEVEL": "debug"}}}}`)

	cfg := mustLoad(t, LoadOptions{Paths: paths, WorkDir: proj})
	var b bytes.Buffer
	if err := cfg.WriteResolved(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Log(out)
	for _, secret := range []string{bearer, "ghp_abcdefghijklmnop", apiKey, secretEnv, serveKey, clientSec, "hunter2", "query-secret", `"tiny"`} {
		if strings.Contains(out, secret) {
			t.Errorf("output shows secret %q", secret)
		}
	}
	for _, want := range []string{
		`Authorization = "****"`,
		`api_key = "****"`,
		`"****"`,
		`client_secret = "****"`,
		`client_id = "public-client"`,
		`LOG_LEVEL = "debug"`,
		`GITHUB_TOKEN = "****"`,
		`"--token", "****", "--verbose"`,
		"# api: user scope, " + userFile + ":15",
		"# proj: project scope, " + filepath.Join(proj, MCPJSONName) + ":1",
		"# disabled: not started: the project directory " + proj + " is not trusted yet",
		"(untrusted: its servers are disabled",
		"max_turns = 50",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	// The output is TOML that otter itself reads.
	var back Config
	md, err := toml.Decode(out, &back)
	if err != nil {
		t.Fatalf("show output does not parse: %v", err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		t.Errorf("show output has keys otter does not know: %v", und)
	}
	if len(back.MCP.Servers) != 2 || back.Agent.Provider != "anthropic" {
		t.Errorf("parsed back: %+v", back)
	}
}

// otter config show marks a server that cannot start with its problem,
// one comment line per problem, and still prints TOML otter reads.
func TestWriteResolvedShowsServerProblem(t *testing.T) {
	paths, _ := testEnv(t)
	file := writeFile(t, paths.UserConfigFile(), `[[mcp.servers]]
name = "github"
command = "github-mcp"
env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }
args = ["--org", "${ORG}"]

[[mcp.servers]]
name = "fs"
command = "fs-server"
`)
	cfg := mustLoad(t, LoadOptions{Paths: paths, WorkDir: t.TempDir(), LookupEnv: noEnv})
	var b bytes.Buffer
	if err := cfg.WriteResolved(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"# github: user scope, " + file + ":1\n" +
			"# problem: " + file + ":5: server \"github\": environment variable ORG is not set (in args)",
		"\n# problem: " + file + ":4: server \"github\": environment variable GITHUB_TOKEN is not set (in env.GITHUB_TOKEN)",
		`GITHUB_TOKEN = "****"`, // kept as written, and masked like any token
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "# problem:"); n != 2 {
		t.Errorf("%d problem lines, want 2:\n%s", n, out)
	}
	var back Config
	if _, err := toml.Decode(out, &back); err != nil || len(back.MCP.Servers) != 2 {
		t.Errorf("show output parsed back: %v, %d servers", err, len(back.MCP.Servers))
	}
}

func TestImportRoundTrip(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "tok")
	t.Setenv("HOME_DIR", "/home/o")
	doc := `{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {"A": "1", "needs quote": "x\"y"}},
    "files": {"command": "mcp-files", "args": ["${HOME_DIR:-/tmp}/docs", "$$keep"], "cwd": "/srv/data"},
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}},
    "old": {"type": "sse", "url": "http://127.0.0.1:9/sse", "disabled": true},
    "login": {"type": "streamable-http", "url": "https://mcp.example.com/mcp", "oauth": {"clientId": "cid", "callbackPort": 8765}}
  }
}`
	dir := t.TempDir()
	jsonFile := writeFile(t, filepath.Join(dir, "claude_desktop_config.json"), doc)
	servers, err := ParseMCPJSON([]byte(doc), jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if names := func() (n []string) {
		for _, s := range servers {
			n = append(n, s.Name)
		}
		return
	}(); !reflect.DeepEqual(names, []string{"everything", "files", "github", "old", "login"}) {
		t.Errorf("names = %v, want the document's order", names)
	}
	if gh := servers[2]; gh.Headers["Authorization"] != "Bearer ${GITHUB_TOKEN}" || gh.Line != 6 {
		t.Errorf("github = %+v: variables must be kept as written, line 6", gh)
	}

	var b bytes.Buffer
	if err := WriteServersTOML(&b, servers); err != nil {
		t.Fatal(err)
	}
	t.Log(b.String())
	tomlFile := writeFile(t, filepath.Join(dir, "imported.toml"), b.String())
	fromTOML, err := LoadFile(tomlFile)
	if err != nil {
		t.Fatalf("LoadFile(imported TOML): %v", err)
	}
	fromJSON, err := LoadFile(jsonFile)
	if err != nil {
		t.Fatalf("LoadFile(json): %v", err)
	}
	strip := func(ss []Server) []Server {
		out := make([]Server, len(ss))
		for i, s := range ss {
			s.File, s.Line = "", 0
			out[i] = s
		}
		return out
	}
	if a, b := strip(fromTOML.MCP.Servers), strip(fromJSON.MCP.Servers); !reflect.DeepEqual(a, b) {
		t.Errorf("round trip differs:\n toml %+v\n json %+v", a, b)
	}
	files, _ := fromTOML.Server("files")
	if files.Args[0] != "/home/o/docs" || files.Args[1] != "$$keep" {
		t.Errorf("files args = %q", files.Args)
	}
	if login, _ := fromTOML.Server("login"); login.OAuth == nil || login.OAuth.ClientID != "cid" || login.OAuth.CallbackPort != 8765 || login.Transport != TransportHTTP {
		t.Errorf("login = %+v", login)
	}
	if old, _ := fromTOML.Server("old"); old.IsEnabled() {
		t.Error(`"disabled": true was lost`)
	}
}

func TestExampleConfigLoads(t *testing.T) {
	_, self, _, _ := runtime.Caller(0)
	example := filepath.Join(filepath.Dir(self), "..", "..", "config.example.toml")
	paths, _ := testEnv(t)
	t.Setenv("GITHUB_TOKEN", "ghp_example")
	t.Setenv("OTTER_SERVE_KEY", "serve-key")
	cfg, err := LoadFile(example)
	if err != nil {
		t.Fatalf("config.example.toml does not load: %v", err)
	}
	if got := serverNames(cfg); !reflect.DeepEqual(got, []string{"everything", "github", "linear", "legacy"}) {
		t.Errorf("servers = %v", got)
	}
	ev := mustServer(t, cfg, "everything")
	if ev.Transport != TransportStdio || ev.Command != "npx" || !strings.Contains(strings.Join(ev.Args, " "), "@modelcontextprotocol/server-everything") {
		t.Errorf("everything = %+v", ev)
	}
	if gh := mustServer(t, cfg, "github"); gh.Headers["Authorization"] != "Bearer ghp_example" || gh.Transport != TransportHTTP {
		t.Errorf("github = %+v", gh)
	}
	if ln := mustServer(t, cfg, "linear"); ln.OAuth == nil || len(ln.OAuth.Scopes) != 2 {
		t.Errorf("linear = %+v", ln)
	}
	if p := cfg.Providers["ollama"]; p.Type != "openai" || p.BaseURL != "http://localhost:11434/v1" {
		t.Errorf("ollama = %+v", p)
	}
	for _, name := range []string{"anthropic", "openai"} {
		if _, ok := cfg.Providers[name]; !ok {
			t.Errorf("provider %s missing", name)
		}
	}
	if cfg.Tools.RateLimits["scrape_page"].RPM != 10 || cfg.Serve.APIKeys[0] != "serve-key" || len(cfg.Permissions) != 5 || !cfg.Tools.LocalEnabled() {
		t.Errorf("tools/serve/permissions = %+v %+v %+v", cfg.Tools, cfg.Serve, cfg.Permissions)
	}
	// Every table of Config appears in the example.
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"[mcp]", "[[mcp.servers]]", "[mcp.servers.oauth]", "[agent]", "[providers.anthropic]", "[providers.openai]", "[providers.ollama]", "[tools]", "[tools.rate_limits.", "[serve]", "[permissions]"} {
		if !bytes.Contains(data, []byte(table)) {
			t.Errorf("example lacks %s", table)
		}
	}
	_ = paths
}

func TestSavePermission(t *testing.T) {
	paths, proj := testEnv(t)
	sub := filepath.Join(proj, "pkg")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(proj, ProjectDirName, LocalConfigName)
	writeFile(t, local, `# my settings
[[mcp.servers]]
name = "x"
command = "x"

[permissions]
"mcp__x__read" = "ask"

[agent]
model = "m"
`)
	if err := paths.SavePermission(sub, "mcp__x__read", "allow"); err != nil {
		t.Fatal(err)
	}
	if err := paths.SavePermission(sub, "mcp__x__*", "deny"); err != nil {
		t.Fatal(err)
	}
	if err := paths.SavePermission(sub, "scrape_page", "maybe"); err == nil {
		t.Error("a bad decision was saved")
	}
	cfg, err := LoadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"mcp__x__read": "allow", "mcp__x__*": "deny"}; !reflect.DeepEqual(cfg.Permissions, want) {
		t.Errorf("permissions = %v, want %v", cfg.Permissions, want)
	}
	data, _ := os.ReadFile(local)
	if !strings.HasPrefix(string(data), "# my settings\n") || cfg.Agent.Model != "m" {
		t.Errorf("the rest of the file changed:\n%s", data)
	}

	// A project without a local file gets one.
	bare := filepath.Join(proj, "..", "bare")
	if err := os.MkdirAll(filepath.Join(bare, ProjectDirName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := paths.SavePermission(bare, "get_status", "allow"); err != nil {
		t.Fatal(err)
	}
	cfg, err = LoadFile(filepath.Join(bare, ProjectDirName, LocalConfigName))
	if err != nil || cfg.Permissions["get_status"] != "allow" {
		t.Fatalf("fresh local file: %v %+v", err, cfg)
	}

	// Outside any project the rule goes to the user config file, and the
	// directory does not become a project.
	plain := t.TempDir()
	if err := paths.SavePermission(plain, "get_status", "allow"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(plain, ProjectDirName)); err == nil {
		t.Errorf("saving a permission outside a project created %s", filepath.Join(plain, ProjectDirName))
	}
	user, short := paths.PermissionsFile(plain)
	if user != paths.UserConfigFile() || short == "" {
		t.Errorf("PermissionsFile outside a project = %q, %q; want the user config %q", user, short, paths.UserConfigFile())
	}
	cfg, err = LoadFile(user)
	if err != nil || cfg.Permissions["get_status"] != "allow" {
		t.Fatalf("user config after saving outside a project: %v %+v", err, cfg)
	}
}

func TestScanPositions(t *testing.T) {
	doc := `# [[mcp.servers]] in a comment
title = """
[[mcp.servers]]
name = "fake"
"""
lit = '''
[agent]'''
[mcp]
servers = [
  { name = "inline-a", command = "a" },
  { name = "inline-b", env = { "K.1" = "v" } },
]
[agent]
"quoted key" = 1
a.b.c = 2
`
	ix := scanPositions(doc)
	for _, tc := range []struct {
		key  toml.Key
		arr  string
		idx  int
		want int
	}{
		{toml.Key{"title"}, "", 0, 2},
		{toml.Key{"lit"}, "", 0, 6},
		{toml.Key{"mcp", "servers"}, "mcp.servers", 0, 10},
		{toml.Key{"mcp", "servers", "name"}, "mcp.servers", 1, 11},
		{toml.Key{"mcp", "servers", "env", "K.1"}, "mcp.servers", 1, 11},
		{toml.Key{"agent", "quoted key"}, "", 0, 14},
		{toml.Key{"agent", "a", "b", "c"}, "", 0, 15},
		{toml.Key{"agent"}, "", 0, 13},
	} {
		if got := ix.line(tc.key, tc.arr, tc.idx); got != tc.want {
			t.Errorf("line(%s, %s, %d) = %d, want %d", tc.key, tc.arr, tc.idx, got, tc.want)
		}
	}
	if n := ix.entries("mcp.servers"); n != 2 {
		t.Errorf("entries = %d, want 2 (the ones in strings do not count)", n)
	}
}

// FuzzScanPositions checks the position scanner on documents the toml
// parser accepts: it terminates, and it finds every [[mcp.servers]] entry
// at a line that exists.
func FuzzScanPositions(f *testing.F) {
	for _, seed := range []string{
		"[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\n",
		"[mcp]\nservers = [{name = \"a\"}, {name = \"b\", env = {K = \"v\"}}]\n",
		"s = \"\"\"\n[[mcp.servers]]\n\"\"\"\n[[mcp.servers]]\nname = 'q'\n",
		"a = [\n  1, # c\n  [2, 3],\n]\n[[mcp.servers]]\n[mcp.servers.oauth]\nx = 1\n",
		"\"k.\\\"q\" = '''x\n''''\n[[mcp.servers]]\nname=\"\\\"\"\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var raw map[string]any
		if _, err := toml.Decode(doc, &raw); err != nil {
			return
		}
		ix := scanPositions(doc)
		want := len(rawServerList(raw))
		if got := ix.entries("mcp.servers"); got != want {
			t.Fatalf("entries = %d, want %d in %q", got, want, doc)
		}
		lines := strings.Count(doc, "\n") + 1
		for i := range want {
			if l := ix.line(toml.Key{"mcp", "servers"}, "mcp.servers", i); l < 1 || l > lines {
				t.Fatalf("entry %d at line %d of %d in %q", i, l, lines, doc)
			}
		}
	})
}

// Secrets that give themselves away by their shape are masked wherever
// they stand: passwords in connection strings, well-known tokens.
func TestWriteResolvedMasksSecretsByShape(t *testing.T) {
	paths, _ := testEnv(t)
	writeFile(t, paths.UserConfigFile(), `[[mcp.servers]]
name = "db"
command = "pg-mcp"
args = ["postgresql://admin:hunter2@db/prod", "--dsn=mysql://root:s3cr3t@h/x", "--verbose", "plain-arg"]
env = { DATABASE_URL = "postgres://u:pw123@h/db", SLACK = "xoxb-1234-5678-abcdefgh", REGION = "eu-west-1" }
`)
	cfg := mustLoad(t, LoadOptions{Paths: paths, WorkDir: t.TempDir(), LookupEnv: noEnv})
	var b bytes.Buffer
	if err := cfg.WriteResolved(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, secret := range []string{"hunter2", "s3cr3t", "pw123", "xoxb-1234-5678"} {
		if strings.Contains(out, secret) {
			t.Errorf("config show prints %q:\n%s", secret, out)
		}
	}
	for _, kept := range []string{"postgresql://admin:****@db/prod", "--dsn=mysql://root:****@h/x", "postgres://u:****@h/db", "--verbose", "plain-arg", `REGION = "eu-west-1"`} {
		if !strings.Contains(out, kept) {
			t.Errorf("config show lacks %q:\n%s", kept, out)
		}
	}
}

// A server's sandbox network is true, false or a list of hosts, and keeps
// its value through the scopes (a project's list over the user's entry)
// and back out in otter config show, which prints its sandbox as the
// inline table people write (it printed "sandbox = [v]", which no TOML
// parser reads).
func TestSandboxNetworkHostsLoadAndShow(t *testing.T) {
	paths, _ := testEnv(t)
	writeFile(t, paths.UserConfigFile(), `[[mcp.servers]]
name = "gh"
command = "gh-mcp"
sandbox = { write = ["/data"], network = ["api.github.com", "*.githubusercontent.com"] }

[[mcp.servers]]
name = "offline"
command = "fs"
sandbox = { network = false }

[[mcp.servers]]
name = "open"
command = "web"
`)
	cfg := mustLoad(t, LoadOptions{Paths: paths, WorkDir: t.TempDir(), LookupEnv: noEnv})
	gh, off, open := mustServer(t, cfg, "gh"), mustServer(t, cfg, "offline"), mustServer(t, cfg, "open")
	if got := gh.Sandbox.NetworkHosts(); !slices.Equal(got, []string{"api.github.com", "*.githubusercontent.com"}) || gh.Sandbox.NetworkAllowed() {
		t.Errorf("gh: hosts %v, any host %v", got, gh.Sandbox.NetworkAllowed())
	}
	if off.Sandbox.NetworkAllowed() || off.Sandbox.NetworkHosts() != nil {
		t.Errorf("network = false reads as any host %v, hosts %v", off.Sandbox.NetworkAllowed(), off.Sandbox.NetworkHosts())
	}
	if !open.Sandbox.NetworkAllowed() {
		t.Error("no sandbox table must allow any host")
	}
	var b bytes.Buffer
	if err := cfg.WriteResolved(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`sandbox = { write = ["/data"], network = ["api.github.com", "*.githubusercontent.com"] }`,
		`sandbox = { network = false }`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("otter config show lacks %q:\n%s", want, b.String())
		}
	}
	var back map[string]any
	if _, err := toml.Decode(b.String(), &back); err != nil {
		t.Errorf("otter config show prints what TOML does not read: %v\n%s", err, b.String())
	}
}
