package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsNameFileAndLine checks every kind of config error: it must be
// an *Error at the right line of the right file, and say what to do.
func TestErrorsNameFileAndLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		toml string
		line int
		want []string // substrings of the message
		not  []string // and what it must not say
	}{
		{
			name: "syntax",
			toml: "[mcp]\nenabled = true\n[[mcp.servers]]\nname = \"a\ncommand = \"x\"\n",
			line: 4,
			want: []string{"TOML syntax error"},
		},
		{
			name: "unclosed table header on line 1",
			toml: "[mcp\nenabled = true\n",
			line: 1,
			want: []string{"TOML syntax error", "to end table name"},
		},
		{
			name: "unknown key in a server",
			toml: "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\n\n[[mcp.servers]]\nname = \"b\"\ncommand = \"y\"\ntimout = \"5s\"\n",
			line: 8,
			want: []string{`unknown key "timout" in server "b"`, `did you mean "timeout"?`},
		},
		{
			name: "unknown table",
			toml: "[agnet]\nmodel = \"m\"\n",
			line: 1,
			want: []string{`unknown key "agnet" at the top level`, `did you mean "agent"?`},
		},
		{
			name: "unknown key in a sub-table",
			toml: "[[mcp.servers]]\nname = \"a\"\nurl = \"https://x.example/mcp\"\n[mcp.servers.oauth]\nclient-id = \"c\"\n",
			line: 5,
			want: []string{`unknown key "client-id" in [mcp.servers.oauth] of server "a"`, `did you mean "client_id"?`},
		},
		{
			name: "unknown key in a provider",
			toml: "[providers.openai]\napi_kee = \"k\"\n",
			line: 2,
			want: []string{`unknown key "api_kee" in [providers.openai]`, `did you mean "api_key"?`},
		},
		{
			name: "a URL in a sandbox's host list",
			toml: "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\nsandbox = { write = [\"/tmp\"],\n  network = [\"api.github.com\", \"https://example.org/x\"] }\n",
			line: 5,
			want: []string{`server "a": sandbox.network: "https://example.org/x" is a URL: write only its host name, such as "example.org"`, `network = ["api.github.com", "*.example.org"]`},
		},
		{
			name: "a port in a sandbox's host list",
			toml: "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\nsandbox = { network = [\"api.github.com:443\"] }\n",
			line: 4,
			want: []string{`"api.github.com:443" names a port (443): write the host alone, "api.github.com"`},
		},
		{
			name: "a host list for the commands the model runs",
			toml: "[agent]\nmodel = \"m\"\n\n[sandbox]\ncommands = { write = [\"/tmp\"], network = [\"github.com\"] }\n",
			line: 5,
			want: []string{`sandbox.commands.network lists hosts (github.com): the commands the model runs cannot be held to a list`, `write network = true for any host or false for none`},
		},
		{
			name: "a sandbox's network neither a boolean nor a list",
			toml: "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\nsandbox = { network = \"api.github.com\" }\n",
			line: 4,
			want: []string{`bad value for mcp.servers.sandbox.network: must be true, false or a list of host names`, `not "api.github.com"`},
		},
		{
			name: "bad transport",
			toml: "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\ntransport = \"websocket\"\n",
			line: 4,
			want: []string{`server "a": bad transport "websocket"`, `"stdio"`},
		},
		{
			name: "streamable-http spelled out",
			toml: "[[mcp.servers]]\nname = \"a\"\nurl = \"https://x.example/mcp\"\ntransport = \"streamable-http\"\n",
			line: 4,
			want: []string{`bad transport "streamable-http"`, `transport = "http"`},
		},
		{
			name: "stdio without command",
			toml: "[[mcp.servers]]\nname = \"a\"\nurl = \"https://x.example/mcp\"\n\n[[mcp.servers]]\nname = \"b\"\ntransport = \"stdio\"\nargs = [\"x\"]\n",
			line: 7,
			want: []string{`server "b" uses transport stdio but has no command`, `add command`},
		},
		{
			name: "http without url",
			toml: "[[mcp.servers]]\nname = \"a\"\ntransport = \"http\"\n",
			line: 3,
			want: []string{`server "a" uses transport http but has no url`},
		},
		{
			name: "sse with a bad url",
			toml: "[[mcp.servers]]\nname = \"a\"\ntransport = \"sse\"\nurl = \"localhost:8080/sse\"\n",
			line: 4,
			want: []string{`server "a": bad url`, "http://"},
		},
		{
			name: "neither command nor url",
			toml: "# servers\n[[mcp.servers]]\nname = \"a\"\ntimeout = \"5s\"\n",
			line: 2,
			want: []string{`server "a" has neither command nor url`},
		},
		{
			name: "override of a misspelt server",
			toml: "[[mcp.servers]]\nname = \"everything\"\ncommand = \"npx\"\n\n[[mcp.servers]]\nname = \"everythin\"\nenv = { A = \"1\" }\n",
			line: 5,
			want: []string{`server "everythin" has neither command nor url`, `did you mean server "everything"?`},
		},
		{
			name: "command and url",
			toml: "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\nurl = \"https://x.example\"\n",
			line: 4,
			want: []string{`server "a" sets both command (line 3) and url (line 4)`, "keep only one"},
			not:  []string{"neither command nor url", "transport"},
		},
		{
			name: "duplicate names",
			toml: "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\n\n[[mcp.servers]]\nname = \"a\"\ncommand = \"y\"\n",
			line: 6,
			want: []string{`server "a" is defined twice in this file (first at line 2)`, "rename"},
		},
		{
			name: "control character in a name",
			toml: "[[mcp.servers]]\ncommand = \"x\"\nname = \"a\\u001b]0;t\\u0007\\nfake row\"\n",
			line: 3,
			want: []string{`server name "a\x1b]0;t\a\nfake row" holds U+001B`, "letters, digits"},
		},
		{
			name: "bidi override in a name",
			toml: "[[mcp.servers]]\nname = \"x\\u202Egnp.exe\"\ncommand = \"x\"\n",
			line: 2,
			want: []string{`server name "x\u202egnp.exe" holds U+202E`},
		},
		{
			name: "missing name",
			toml: "[[mcp.servers]]\ncommand = \"x\"\n",
			line: 1,
			want: []string{"has no name", `name = "..."`},
		},
		{
			name: "bad duration in the second of two entries",
			toml: "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\ntimeout = \"5s\"\n\n[[mcp.servers]]\nname = \"b\"\ncommand = \"y\"\ntimeout = \"5 minutes\"\n\n[[mcp.servers]]\nname = \"c\"\ncommand = \"z\"\ntimeout = \"1s\"\n",
			line: 9,
			want: []string{`server "b": bad value for mcp.servers.timeout`, `"5 minutes"`, `"30s"`},
		},
		{
			name: "bad duration in [mcp]",
			toml: "[mcp]\nauto_reload = true\nhealth_check_interval = 30\n",
			line: 3,
			want: []string{"health_check_interval", "duration"},
		},
		{
			name: "negative timeout",
			toml: "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\nstartup_timeout = \"-1s\"\n",
			line: 4,
			want: []string{"startup_timeout must not be negative"},
		},
		{
			name: "idle_timeout too short",
			toml: "[mcp]\nlazy = true\nidle_timeout = \"100ms\"\n",
			line: 3,
			want: []string{"mcp.idle_timeout = 100ms is too short", `"10m"`},
		},
		{
			name: "negative idle_timeout of a server",
			toml: "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\nidle_timeout = \"-5m\"\n",
			line: 4,
			want: []string{`server "a": idle_timeout must not be negative`},
		},
		{
			name: "lazy not a boolean",
			toml: "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\nlazy = \"no\"\n",
			line: 4,
			want: []string{`server "a": bad value for mcp.servers.lazy`},
		},
		{
			name: "registry not a URL",
			toml: "[mcp]\nregistry = \"registry.example.com\"\n",
			line: 2,
			want: []string{`mcp.registry = "registry.example.com" is not an http(s) URL`, "https://registry.modelcontextprotocol.io"},
		},
		{
			name: "negative keep_days",
			toml: "[sessions]\nkeep_days = -1\n",
			line: 2,
			want: []string{"sessions.keep_days must not be negative", "0 to keep every session"},
		},
		{
			name: "bad glob in allowed_tools",
			toml: "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\nallowed_tools = [\"read_*\", \"[a-\"]\n",
			line: 4,
			want: []string{`bad glob pattern "[a-" in allowed_tools`},
		},
		{
			name: "bad glob in denied_tools",
			toml: "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\ndenied_tools = [\n  \"write\\\\\",\n]\n",
			line: 4,
			want: []string{"in denied_tools"},
		},
		{
			name: "wrong type",
			toml: "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\n\n[[mcp.servers]]\nname = \"b\"\ncommand = \"y\"\nargs = \"--flag\"\n",
			line: 8,
			want: []string{`server "b": bad value for mcp.servers.args`},
		},
		{
			name: "servers as a plain table",
			toml: "[mcp.servers]\nname = \"a\"\ncommand = \"x\"\n",
			line: 1,
			want: []string{"mcp.servers", "[[mcp.servers]]"},
		},
		{
			name: "permission decision",
			toml: "[permissions]\n\"mcp__fs__*\" = \"yes\"\n",
			line: 2,
			want: []string{`"mcp__fs__*" has unknown decision "yes"`, `"allow", "ask" or "deny"`},
		},
		{
			name: "provider type",
			toml: "[providers.local]\ntype = \"ollama\"\nbase_url = \"http://localhost:11434/v1\"\n",
			line: 2,
			want: []string{`providers.local: unknown type "ollama"`, "OpenAI-compatible", `"openai-responses"`},
		},
		{
			name: "unknown oauth grant",
			toml: "[[mcp.servers]]\nname = \"a\"\nurl = \"https://x.example/mcp\"\n[mcp.servers.oauth]\nclient_id = \"c\"\ngrant = \"client-credentials\"\n",
			line: 6,
			want: []string{`server "a": unknown oauth.grant "client-credentials"`, `did you mean "client_credentials"?`},
		},
		{
			name: "unsupported signing_alg",
			toml: "[[mcp.servers]]\nname = \"a\"\nurl = \"https://x.example/mcp\"\n[mcp.servers.oauth]\ngrant = \"client_credentials\"\nclient_id = \"c\"\nprivate_key_file = \"k.pem\"\nsigning_alg = \"HS256\"\n",
			line: 8,
			want: []string{`unsupported oauth.signing_alg "HS256"`, "ES256"},
		},
		{
			name: "private key file and pem",
			toml: "[[mcp.servers]]\nname = \"a\"\nurl = \"https://x.example/mcp\"\n[mcp.servers.oauth]\ngrant = \"client_credentials\"\nclient_id = \"c\"\nprivate_key_file = \"k.pem\"\nprivate_key_pem = \"-----BEGIN\"\n",
			line: 8,
			want: []string{"both private_key_file and private_key_pem", "keep one"},
		},
		{
			name: "client_credentials without client_id",
			toml: "[[mcp.servers]]\nname = \"a\"\nurl = \"https://x.example/mcp\"\n[mcp.servers.oauth]\ngrant = \"client_credentials\"\nclient_secret = \"s\"\n",
			line: 5,
			want: []string{`server "a": the client_credentials grant needs oauth.client_id`, "client_id ="},
		},
		{
			name: "client_credentials without a secret or key",
			toml: "[[mcp.servers]]\nname = \"a\"\nurl = \"https://x.example/mcp\"\n\n[mcp.servers.oauth]\nclient_id = \"c\"\ngrant = \"client_credentials\"\n",
			line: 7,
			want: []string{"needs oauth.client_secret or a private key", "private_key_file"},
		},
		{
			name: "client_credentials with a secret and a key",
			toml: "[[mcp.servers]]\nname = \"a\"\nurl = \"https://x.example/mcp\"\n[mcp.servers.oauth]\ngrant = \"client_credentials\"\nclient_id = \"c\"\nclient_secret = \"s\"\nprivate_key_file = \"k.pem\"\n",
			line: 8,
			want: []string{"both client_secret and a private key"},
		},
		{
			name: "private key without client_credentials",
			toml: "[[mcp.servers]]\nname = \"a\"\nurl = \"https://x.example/mcp\"\n[mcp.servers.oauth]\nclient_id = \"c\"\nprivate_key_pem = \"${KEY:-x}\"\n",
			line: 6,
			want: []string{"used only with the client_credentials grant", `grant = "client_credentials"`},
		},
		{
			name: "compact_at out of range",
			toml: "[agent]\nmodel = \"m\"\ncompact_at = 1.5\n",
			line: 3,
			want: []string{"agent.compact_at = 1.5", "0.8"},
		},
		{
			name: "negative context window",
			toml: "[providers.local]\ntype = \"openai\"\ncontext_window = -1\n",
			line: 3,
			want: []string{"providers.local.context_window must be a positive number of tokens"},
		},
		{
			name: "output limit over the window of one model",
			toml: "[providers.local]\ntype = \"openai\"\n[providers.local.models.\"qwen3:8b\"]\ncontext_window = 4096\nmax_output_tokens = 8192\n",
			line: 5,
			want: []string{"max_output_tokens 8192 is not smaller than context_window 4096"},
		},
		{
			name: "negative price",
			toml: "[pricing.\"my-model\"]\ninput = 1.5\noutput = -2\n",
			line: 1,
			want: []string{`pricing."my-model": a price is negative`},
		},
		{
			name: "unknown key in a price",
			toml: "[pricing.\"my-model\"]\ninput = 1.5\noutput = 2\ncached = 0.1\n",
			line: 4,
			want: []string{`unknown key "cached" in [pricing.my-model]`, "cached_input"},
		},
		{
			name: "private network CIDR",
			toml: "[tools]\nallow_private_networks = [\"10.0.0.0/8\", \"192.168.1.5\"]\n",
			line: 2,
			want: []string{`"192.168.1.5" is not a CIDR`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, filepath.Join(t.TempDir(), "config.toml"), tc.toml)
			cfg, err := LoadFile(file)
			if err == nil {
				t.Fatalf("LoadFile accepted it: %+v", cfg.MCP.Servers)
			}
			var cerr *Error
			if !errors.As(err, &cerr) {
				t.Fatalf("err = %T %v, want *Error", err, err)
			}
			if cerr.File != file || cerr.Line != tc.line {
				t.Errorf("error at %s:%d, want %s:%d: %v", cerr.File, cerr.Line, file, tc.line, err)
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("%s:%d: ", file, tc.line)) {
				t.Errorf("message %q does not start with file:line", err)
			}
			if cerr.Hint == "" {
				t.Errorf("no hint on what to do: %v", err)
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error %q contradicts itself: it also says %q", err, w)
				}
			}
		})
	}
}

// TestErrorsAreAllReported checks that one run reports every problem, so a
// user fixes a file in one go.
func TestErrorsAreAllReported(t *testing.T) {
	file := writeFile(t, filepath.Join(t.TempDir(), "c.toml"), `[[mcp.servers]]
name = "a"
transport = "carrier-pigeon"
command = "x"

[[mcp.servers]]
name = "b"
commnd = "y"
`)
	_, err := LoadFile(file)
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		t.Fatalf("err = %v, want several errors", err)
	}
	var lines []int
	for _, e := range joined.Unwrap() {
		var ce *Error
		if errors.As(e, &ce) {
			lines = append(lines, ce.Line)
		}
	}
	// Unknown keys first, then the values, each at its own line.
	if fmt.Sprint(lines) != "[8 3]" {
		t.Errorf("error lines = %v, want [8 3]: %v", lines, err)
	}
	for _, w := range []string{`did you mean "command"?`, `bad transport "carrier-pigeon"`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("err = %v, want %q", err, w)
		}
	}
}

func TestMissingExtraFile(t *testing.T) {
	paths, _ := testEnv(t)
	missing := filepath.Join(t.TempDir(), "nope.toml")
	_, err := Load(LoadOptions{Paths: paths, WorkDir: t.TempDir(), Extra: missing, ExtraHint: "check the path given to --config"})
	var cerr *Error
	if !errors.As(err, &cerr) || cerr.File != missing || !strings.Contains(err.Error(), "--config") {
		t.Fatalf("err = %v, want an *Error naming %s and --config", err, missing)
	}
}

// A missing file given to otter config validate or otter mcp import is
// not blamed on --config, which was not used.
func TestMissingNamedFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.toml")
	for name, load := range map[string]func(string) error{
		"LoadFile":    func(p string) error { _, err := LoadFile(p); return err },
		"FileServers": func(p string) error { _, err := FileServers(p); return err },
	} {
		err := load(missing)
		var cerr *Error
		if !errors.As(err, &cerr) || cerr.File != missing || strings.Contains(err.Error(), "--config") || !strings.Contains(err.Error(), "check the path") {
			t.Errorf("%s: err = %v, want an *Error naming %s that says to check the path, without --config", name, err, missing)
		}
	}
}

// A missing ${VAR} offers turning the server off the way its file does it.
func TestMissingVarHintPerFormat(t *testing.T) {
	t.Setenv("OTTER_TEST_SURELY_UNSET", "")
	os.Unsetenv("OTTER_TEST_SURELY_UNSET")
	dir := t.TempDir()
	for file, content := range map[string]string{
		".mcp.json":   "{\"mcpServers\": {\"gh\": {\"command\": \"x\", \"env\": {\"T\": \"${OTTER_TEST_SURELY_UNSET}\"}}}}",
		"config.toml": "[[mcp.servers]]\nname = \"gh\"\ncommand = \"x\"\nenv = { T = \"${OTTER_TEST_SURELY_UNSET}\" }\n",
	} {
		p := filepath.Join(dir, file)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		want, notWant := "enabled = false", `"disabled": true`
		if file == ".mcp.json" {
			want, notWant = notWant, want
		}
		cfg, err := LoadFile(p)
		if err != nil {
			t.Fatalf("%s: LoadFile: %v", file, err)
		}
		err = cfg.ServerProblems()
		if err == nil || !strings.Contains(err.Error(), "OTTER_TEST_SURELY_UNSET is not set") ||
			!strings.Contains(err.Error(), want) || strings.Contains(err.Error(), notWant) {
			t.Errorf("%s: err = %v, want the missing variable and the hint %s", file, err, want)
		}
	}
}

func TestMCPJSONErrors(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		line       int
		want       string
	}{
		{"syntax", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}", 3, "JSON syntax error"},
		{"no mcpServers", `{"servers": {}}`, 1, `no "mcpServers" object`},
		{"args not a list", "{\"mcpServers\": {\n\"a\": {\"command\": \"x\"},\n\"b\": {\"command\": \"x\", \"args\": \"-y\"}}}", 3, `server "b": args must be an array of strings, not a JSON string`},
		{"entry not an object", "{\"mcpServers\": {\n\"a\": \"npx\"}}", 2, `server "a": must be an object, not a JSON string`},
		{"no command", "{\"mcpServers\": {\n\"a\": {\"args\": [\"x\"]}}}", 2, `server "a" has neither command nor url`},
		{"unknown type", "{\"mcpServers\": {\n\"a\": {\"type\": \"ws\", \"url\": \"ws://x\"}}}", 2, `has type "ws"`},
		{"http without url", "{\"mcpServers\": {\n\n\"a\": {\"type\": \"http\"}}}", 3, "remote server without a url"},
		{"command and url", "{\"mcpServers\": {\n\"a\": {\"command\": \"x\", \"url\": \"https://x.example\"}}}", 2, `server "a" has both command and url (keep only one: "command" runs a local server, "url" connects to a remote one)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseMCPJSON([]byte(tc.json), "x/.mcp.json")
			var cerr *Error
			if !errors.As(err, &cerr) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if cerr.File != "x/.mcp.json" || cerr.Line != tc.line || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v (line %d), want line %d and %q", err, cerr.Line, tc.line, tc.want)
			}
		})
	}
}

// A command in one scope and a url in another merge into an entry with
// both. The error is at the entry that added the second, names where the
// first comes from, and says how to drop it; doing so works.
func TestCommandAndURLFromTwoScopes(t *testing.T) {
	for _, tc := range []struct {
		name, user, local, added, inherited string
	}{
		{"url over command", "command = \"x\"", "url = \"https://x.example\"", "url", "command"},
		{"command over url", "url = \"https://x.example\"", "command = \"x\"", "command", "url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			paths, proj := testEnv(t)
			user := writeFile(t, paths.UserConfigFile(), "[[mcp.servers]]\nname = \"a\"\n"+tc.user+"\n")
			localFile := filepath.Join(proj, ProjectDirName, LocalConfigName)
			local := writeFile(t, localFile, "[[mcp.servers]]\nname = \"a\"\n\n"+tc.local+"\n")
			_, err := Load(LoadOptions{Paths: paths, WorkDir: proj})
			want := fmt.Sprintf(`%s:4: server "a" has both a command and a url: this file sets the %s, %s:3 sets the %s `+
				`(keep only one (command runs a local server, url connects to a remote one): to replace the %s of %s, add %s = "" here)`,
				local, tc.added, user, tc.inherited, tc.inherited, user, tc.inherited)
			if err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
			// Following the hint gives a server of the kind the local file chose.
			writeFile(t, localFile, "[[mcp.servers]]\nname = \"a\"\n"+tc.inherited+" = \"\"\n"+tc.local+"\n")
			cfg := mustLoad(t, LoadOptions{Paths: paths, WorkDir: proj})
			s := mustServer(t, cfg, "a")
			if wantT := map[string]string{"url": TransportHTTP, "command": TransportStdio}[tc.added]; s.Transport != wantT {
				t.Errorf("after the fix: transport %q, want %q (%+v)", s.Transport, wantT, s)
			}
		})
	}
}

// TestMCPJSONRefusesUnsafeNames: a .mcp.json server name with a control,
// bidi or invisible character is an error at the name's line, the name
// escaped in the message.
func TestMCPJSONRefusesUnsafeNames(t *testing.T) {
	for _, name := range []string{`a\u001b]52;c;ZXZpbA==\u0007`, `ok\nfake  stdio  connected`, `x\u200by`, `x\u202ey`} { // names as JSON escapes them
		doc := "{\"mcpServers\": {\n  \"fine\": {\"command\": \"x\"},\n  \"" + name + "\": {\"command\": \"x\"}\n}}\n"
		_, err := ParseMCPJSON([]byte(doc), "p/.mcp.json")
		var e *Error
		if !errors.As(err, &e) || e.Line != 3 || !strings.Contains(e.Msg, "holds U+") || strings.ContainsAny(err.Error(), "\x1b\x07\n\u200b\u202e") {
			t.Errorf("name %s: err = %q, want an error at line 3 with the name escaped", name, err)
		}
	}
}
