package main

// Flags → options, as gh's NewCmdX(f, runF) tests: each command is built
// with a runF that catches the options it would run with, so these tests
// check what the command line means without starting a server, a model or
// the TUI. What a command then does is the business of internal/cli's
// tests and of the tests that run the real command.

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/cli"
	"github.com/otter-sh/otter/internal/iostreams"
	"github.com/otter-sh/otter/internal/serve"
)

// optionsCase is one command line: the options it gives, or a part of the
// error it is refused with (and then the command must not run).
type optionsCase[O any] struct {
	args []string
	want O
	err  string
}

// checkOptions runs the command newCmd builds on each case's args.
func checkOptions[O any](t *testing.T, newCmd func(*cli.Factory, func(*O) error) *cobra.Command, cases []optionsCase[O]) {
	t.Helper()
	for _, tc := range cases {
		var got *O
		streams, _, _, _ := iostreams.Test()
		cmd := newCmd(&cli.Factory{IO: streams}, func(o *O) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		err := cmd.Execute()
		line := strings.Join(append([]string{cmd.Name()}, tc.args...), " ")
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one saying %q", line, err, tc.err)
			}
			if got != nil {
				t.Errorf("%s: ran with %+v although the flags were refused", line, *got)
			}
		case err != nil:
			t.Errorf("%s: %v", line, err)
		case got == nil:
			t.Errorf("%s: the command did not run", line)
		case !reflect.DeepEqual(*got, tc.want):
			t.Errorf("%s:\n got %+v\nwant %+v", line, *got, tc.want)
		}
	}
}

func TestMCPAddOptions(t *testing.T) {
	checkOptions(t, newCmdMCPAdd, []optionsCase[cli.MCPAddOptions]{
		{args: []string{"everything", "--", "npx", "-y", "@modelcontextprotocol/server-everything"},
			want: cli.MCPAddOptions{Name: "everything", Scope: "user", Target: []string{"npx", "-y", "@modelcontextprotocol/server-everything"}}},
		// Flags after -- belong to the server's command, not to otter.
		{args: []string{"--scope", "project", "--env", "API_KEY=${API_KEY}", "--env", "B=2", "docs", "--", "docs-mcp", "--stdio"},
			want: cli.MCPAddOptions{Name: "docs", Scope: "project", Env: []string{"API_KEY=${API_KEY}", "B=2"}, Target: []string{"docs-mcp", "--stdio"}}},
		{args: []string{"--header", "Authorization: Bearer ${GITHUB_TOKEN}", "--transport", "sse", "github", "https://api.example.com/mcp/"},
			want: cli.MCPAddOptions{Name: "github", Scope: "user", Transport: "sse", Headers: []string{"Authorization: Bearer ${GITHUB_TOKEN}"}, Target: []string{"https://api.example.com/mcp/"}}},
		{args: []string{"--roots", "a,b", "--roots", "c", "files", "--", "srv"},
			want: cli.MCPAddOptions{Name: "files", Scope: "user", Roots: []string{"a", "b", "c"}, Target: []string{"srv"}}},
		{args: []string{"--no-roots", "files", "--", "srv", "~/notes"},
			want: cli.MCPAddOptions{Name: "files", Scope: "user", NoRoots: true, Target: []string{"srv", "~/notes"}}},
		{args: []string{"filesystem", "--from-registry", "--arg", "allowed_directory=/a", "--arg", "allowed_directory=/b", "--as", "notes", "--scope", "local"},
			want: cli.MCPAddOptions{Name: "filesystem", Scope: "local", FromRegistry: true, Args: []string{"allowed_directory=/a", "allowed_directory=/b"}, As: "notes", Target: []string{}}},
		{args: []string{"--from-registry", "--remote", "--header", "X-Region: eu", "io.github.github/github-mcp-server"},
			want: cli.MCPAddOptions{Name: "io.github.github/github-mcp-server", Scope: "user", FromRegistry: true, Remote: true, Headers: []string{"X-Region: eu"}, Target: []string{}}},
		{args: []string{"--from-registry", "--package", "oci", "github"},
			want: cli.MCPAddOptions{Name: "github", Scope: "user", FromRegistry: true, Package: "oci", Target: []string{}}},
		{args: nil, err: "requires at least 1 arg(s), only received 0"},
		{args: []string{"x", "--scope"}, err: "flag needs an argument: --scope"},
		{args: []string{"--env-var", "A=1", "x"}, err: "unknown flag: --env-var"},
	})
}

func TestMCPSearchOptions(t *testing.T) {
	checkOptions(t, newCmdMCPSearch, []optionsCase[cli.MCPSearchOptions]{
		{args: []string{"filesystem"}, want: cli.MCPSearchOptions{Query: "filesystem", Limit: 30}},
		{args: []string{"--json", "--limit", "5", "git"}, want: cli.MCPSearchOptions{Query: "git", Limit: 5, JSON: true}},
		{args: nil, err: "accepts 1 arg(s), received 0"},
		{args: []string{"a", "b"}, err: "accepts 1 arg(s), received 2"},
		{args: []string{"x", "--limit", "many"}, err: `invalid argument "many" for "--limit"`},
	})
}

func TestMCPResourcesOptions(t *testing.T) {
	checkOptions(t, newCmdMCPResources, []optionsCase[cli.MCPResourcesOptions]{
		{args: nil, want: cli.MCPResourcesOptions{}},
		{args: []string{"everything", "--json"}, want: cli.MCPResourcesOptions{Server: "everything", JSON: true}},
		{args: []string{"a", "b"}, err: "accepts at most 1 arg(s), received 2"},
		{args: []string{"--json=maybe"}, err: `invalid argument "maybe" for "--json"`},
	})
}

func TestMCPPromptsOptions(t *testing.T) {
	checkOptions(t, newCmdMCPPrompts, []optionsCase[cli.MCPPromptsOptions]{
		{args: nil, want: cli.MCPPromptsOptions{}},
		{args: []string{"--json", "everything"}, want: cli.MCPPromptsOptions{Server: "everything", JSON: true}},
		{args: []string{"everything", "simple-prompt"}, err: "accepts at most 1 arg(s), received 2"},
	})
}

func TestMCPReadOptions(t *testing.T) {
	const uri = "demo://resource/dynamic/text/1"
	checkOptions(t, newCmdMCPRead, []optionsCase[cli.MCPReadOptions]{
		{args: []string{"everything", uri}, want: cli.MCPReadOptions{Server: "everything", URI: uri}},
		{args: []string{"everything", uri, "-o", "blob.bin"}, want: cli.MCPReadOptions{Server: "everything", URI: uri, Output: "blob.bin"}},
		{args: []string{"--output", "x.txt", "--json", "everything", uri}, want: cli.MCPReadOptions{Server: "everything", URI: uri, Output: "x.txt", JSON: true}},
		{args: []string{uri}, err: "accepts 2 arg(s), received 1"},
		{args: []string{"everything", uri, "-o"}, err: "flag needs an argument: 'o' in -o"},
	})
}

func TestMCPPromptOptions(t *testing.T) {
	checkOptions(t, newCmdMCPPrompt, []optionsCase[cli.MCPPromptOptions]{
		{args: []string{"everything", "simple-prompt"}, want: cli.MCPPromptOptions{Server: "everything", Name: "simple-prompt", Args: []string{}}},
		{args: []string{"--json", "everything", "resource-prompt", "resourceType=Text", "resourceId=2"},
			want: cli.MCPPromptOptions{Server: "everything", Name: "resource-prompt", Args: []string{"resourceType=Text", "resourceId=2"}, JSON: true}},
		{args: []string{"everything"}, err: "requires at least 2 arg(s), only received 1"},
		{args: []string{"--jsn", "everything", "p"}, err: "unknown flag: --jsn"},
	})
}

// TestMCPServerOptions: remove, enable and disable take NAME and --scope;
// get takes NAME and --json.
func TestMCPServerOptions(t *testing.T) {
	scoped := map[string]func(*cli.Factory, func(*cli.MCPServerOptions) error) *cobra.Command{
		"remove": newCmdMCPRemove,
		"enable": func(f *cli.Factory, runF func(*cli.MCPServerOptions) error) *cobra.Command {
			return newCmdMCPEnable(f, true, runF)
		},
		"disable": func(f *cli.Factory, runF func(*cli.MCPServerOptions) error) *cobra.Command {
			return newCmdMCPEnable(f, false, runF)
		},
	}
	for name, newCmd := range scoped {
		t.Run(name, func(t *testing.T) {
			checkOptions(t, newCmd, []optionsCase[cli.MCPServerOptions]{
				{args: []string{"github"}, want: cli.MCPServerOptions{Name: "github"}},
				{args: []string{"--scope", "local", "github"}, want: cli.MCPServerOptions{Name: "github", Scope: "local"}},
				{args: nil, err: "accepts 1 arg(s), received 0"},
				{args: []string{"github", "gitlab"}, err: "accepts 1 arg(s), received 2"},
				{args: []string{"github", "--scope"}, err: "flag needs an argument: --scope"},
				{args: []string{"--json", "github"}, err: "unknown flag: --json"},
			})
		})
	}
	checkOptions(t, newCmdMCPGet, []optionsCase[cli.MCPServerOptions]{
		{args: []string{"github"}, want: cli.MCPServerOptions{Name: "github"}},
		{args: []string{"github", "--json"}, want: cli.MCPServerOptions{Name: "github", JSON: true}},
		{args: nil, err: "accepts 1 arg(s), received 0"},
		{args: []string{"--scope", "user", "github"}, err: "unknown flag: --scope"},
	})
}

func TestMCPImportOptions(t *testing.T) {
	checkOptions(t, newCmdMCPImport, []optionsCase[cli.ImportOptions]{
		{args: nil, want: cli.ImportOptions{}},
		{args: []string{"claude_desktop_config.json"}, want: cli.ImportOptions{File: "claude_desktop_config.json"}},
		{args: []string{"--write", ".mcp.json"}, want: cli.ImportOptions{File: ".mcp.json", Write: true}},
		{args: []string{"a.json", "b.json"}, err: "accepts at most 1 arg(s), received 2"},
		{args: []string{"--write=soon"}, err: `invalid argument "soon" for "--write"`},
	})
}

func TestMCPCallOptions(t *testing.T) {
	checkOptions(t, newCmdMCPCall, []optionsCase[cli.MCPCallOptions]{
		{args: []string{"everything", "get-sum", `{"a":2,"b":3}`},
			want: cli.MCPCallOptions{Args: []string{"everything", "get-sum", `{"a":2,"b":3}`}}},
		{args: []string{"--url", "http://127.0.0.1:3001/mcp", "--header", "X-Key: k", "--timeout", "30s", "--json", "echo", "-"},
			want: cli.MCPCallOptions{Args: []string{"echo", "-"}, JSON: true, Timeout: 30 * time.Second,
				Conn: cli.ConnOptions{URL: "http://127.0.0.1:3001/mcp", Given: []string{"--url"}, Headers: []string{"X-Key: k"}}}},
		// An empty --stdio (a $CMD that is unset) still counts as given, so
		// that the call does not fall back to the configured servers.
		{args: []string{"--stdio", "", "echo"},
			want: cli.MCPCallOptions{Args: []string{"echo"}, Conn: cli.ConnOptions{Given: []string{"--stdio"}}}},
		{args: []string{"--sse", "http://h/sse", "--startup-timeout", "1m", "--elicit", "decline",
			"--oauth-client-id", "cid", "--oauth-client-secret", "s", "--oauth-scope", "read", "--oauth-scope", "a,b", "--oauth-callback-port", "8765", "t"},
			want: cli.MCPCallOptions{Args: []string{"t"}, Conn: cli.ConnOptions{SSE: "http://h/sse", Given: []string{"--sse"}, StartupTimeout: time.Minute, Elicit: "decline",
				OAuth: cli.OAuthOptions{ClientID: "cid", ClientSecret: "s", Scopes: []string{"read", "a", "b"}, CallbackPort: 8765}}}},
		{args: nil, err: "accepts between 1 and 3 arg(s), received 0"},
		{args: []string{"a", "b", "c", "d"}, err: "accepts between 1 and 3 arg(s), received 4"},
		{args: []string{"--timeout", "soon", "t"}, err: `invalid argument "soon" for "--timeout"`},
		{args: []string{"--oauth-callback-port", "any", "t"}, err: `invalid argument "any" for "--oauth-callback-port"`},
	})
}

func TestMCPToolsOptions(t *testing.T) {
	checkOptions(t, newCmdMCPTools, []optionsCase[cli.MCPToolsOptions]{
		{args: nil, want: cli.MCPToolsOptions{}},
		{args: []string{"github", "--json"}, want: cli.MCPToolsOptions{Server: "github", JSON: true}},
		{args: []string{"--search", "read a web page", "--limit", "3"}, want: cli.MCPToolsOptions{Search: "read a web page", Limit: 3}},
		{args: []string{"--url", "http://h/mcp", "--oauth-grant", "client_credentials", "--oauth-client-id", "ci", "--oauth-private-key-file", "k.pem", "--oauth-signing-alg", "ES256"},
			want: cli.MCPToolsOptions{Conn: cli.ConnOptions{URL: "http://h/mcp", Given: []string{"--url"},
				OAuth: cli.OAuthOptions{Grant: "client_credentials", ClientID: "ci", PrivateKeyFile: "k.pem", SigningAlg: "ES256"}}}},
		{args: []string{"a", "b"}, err: "accepts at most 1 arg(s), received 2"},
		{args: []string{"--limit", "few"}, err: `invalid argument "few" for "--limit"`},
	})
}

func TestMCPListOptions(t *testing.T) {
	checkOptions(t, newCmdMCPList, []optionsCase[cli.MCPListOptions]{
		{args: nil, want: cli.MCPListOptions{}},
		{args: []string{"--json"}, want: cli.MCPListOptions{JSON: true}},
		{args: []string{"github"}, err: `unknown command "github" for "list"`},
	})
}

func TestMCPLoginOptions(t *testing.T) {
	checkOptions(t, newCmdMCPLogin, []optionsCase[cli.LoginOptions]{
		{args: []string{"github"}, want: cli.LoginOptions{Server: "github"}},
		{args: []string{"--force", "github"}, want: cli.LoginOptions{Server: "github", Force: true}},
		{args: []string{"https://mcp.example.com/mcp", "--oauth-client-id", "otter-cli", "--oauth-client-metadata-url", "https://example.com/c.json", "--oauth-scope", "repo"},
			want: cli.LoginOptions{Server: "https://mcp.example.com/mcp",
				OAuth: cli.OAuthOptions{ClientID: "otter-cli", MetadataURL: "https://example.com/c.json", Scopes: []string{"repo"}}}},
		{args: nil, err: "accepts 1 arg(s), received 0"},
		{args: []string{"a", "b"}, err: "accepts 1 arg(s), received 2"},
		{args: []string{"--oauth-client", "x", "a"}, err: "unknown flag: --oauth-client"},
		{args: []string{"--oauth-grant", "password", "a"}, err: `--oauth-grant "password": use "client_credentials" or "authorization_code"`},
		{args: []string{"--oauth-client-secret", "s", "a"}, err: "--oauth-client-secret needs --oauth-client-id"},
		{args: []string{"--oauth-private-key-file", "k.pem", "a"}, err: "--oauth-private-key-file and --oauth-signing-alg need --oauth-grant client_credentials"},
	})
}

func TestMCPLogoutOptions(t *testing.T) {
	checkOptions(t, newCmdMCPLogout, []optionsCase[cli.LogoutOptions]{
		{args: []string{"github"}, want: cli.LogoutOptions{Server: "github"}},
		{args: []string{"https://mcp.example.com/mcp"}, want: cli.LogoutOptions{Server: "https://mcp.example.com/mcp"}},
		{args: nil, err: "accepts 1 arg(s), received 0"},
		{args: []string{"--force", "github"}, err: "unknown flag: --force"},
	})
}

func TestConfigValidateOptions(t *testing.T) {
	checkOptions(t, newCmdConfigValidate, []optionsCase[cli.ConfigValidateOptions]{
		{args: nil, want: cli.ConfigValidateOptions{}},
		{args: []string{".otter/config.toml"}, want: cli.ConfigValidateOptions{Path: ".otter/config.toml"}},
		{args: []string{"a.toml", "b.toml"}, err: "accepts at most 1 arg(s), received 2"},
		{args: []string{"--json"}, err: "unknown flag: --json"},
	})
}

func TestConfigShowOptions(t *testing.T) {
	checkOptions(t, newCmdConfigShow, []optionsCase[cli.ConfigShowOptions]{
		{args: nil, want: cli.ConfigShowOptions{}},
		{args: []string{"mcp"}, err: `unknown command "mcp" for "show"`},
		{args: []string{"--json"}, err: "unknown flag: --json"},
	})
}

// TestTrustOptions: which of DIR, --list and --revoke go together is
// RunTrust's to refuse; the command only parses them.
func TestTrustOptions(t *testing.T) {
	checkOptions(t, newCmdTrust, []optionsCase[cli.TrustOptions]{
		{args: nil, want: cli.TrustOptions{}},
		{args: []string{"~/src/app"}, want: cli.TrustOptions{Dir: "~/src/app"}},
		{args: []string{"--list"}, want: cli.TrustOptions{List: true}},
		{args: []string{"--revoke", "/tmp/app"}, want: cli.TrustOptions{Revoke: "/tmp/app"}},
		{args: []string{"a", "b"}, err: "accepts at most 1 arg(s), received 2"},
		{args: []string{"--revoke"}, err: "flag needs an argument: --revoke"},
	})
}

func TestHooksImportOptions(t *testing.T) {
	checkOptions(t, newCmdHooks, []optionsCase[cli.HooksImportOptions]{
		{args: []string{"import"}, want: cli.HooksImportOptions{}},
		{args: []string{"import", "hooks.json"}, want: cli.HooksImportOptions{File: "hooks.json"}},
		{args: []string{"import", "--write", "~/.claude/settings.json"}, want: cli.HooksImportOptions{File: "~/.claude/settings.json", Write: true}},
		{args: []string{"import", "a.json", "b.json"}, err: "accepts at most 1 arg(s), received 2"},
		{args: []string{"import", "--write=never"}, err: `invalid argument "never" for "--write"`},
		{args: []string{"imprt"}, err: `unknown command "imprt" for "hooks"`},
	})
}

func TestMCPServeOptions(t *testing.T) {
	checkOptions(t, newCmdMCPServe, []optionsCase[cli.ServeOptions]{
		{args: nil, want: cli.ServeOptions{CallTimeout: serve.DefaultCallTimeout}},
		{args: []string{"--http", "127.0.0.1:8080", "--daily-quota", "100", "--call-timeout", "2m"},
			want: cli.ServeOptions{HTTPAddr: "127.0.0.1:8080", DailyQuota: 100, CallTimeout: 2 * time.Minute}},
		{args: []string{"--http", ":8080"}, want: cli.ServeOptions{HTTPAddr: ":8080", CallTimeout: serve.DefaultCallTimeout}},
		// A bare port could mean this machine or every interface: refused,
		// with both ways to say it.
		{args: []string{"--http", "8080"}, err: "--http 8080 is a port without a host: use --http 127.0.0.1:8080 to serve this machine only, or --http :8080"},
		{args: []string{"--http", ""}, err: "--http needs HOST:PORT"},
		{args: []string{"--http", "localhost"}, err: "--http localhost has no port: write HOST:PORT, e.g. --http localhost:8080"},
		{args: []string{"--daily-quota", "lots"}, err: `invalid argument "lots" for "--daily-quota"`},
		{args: []string{"stdio"}, err: `unknown command "stdio" for "serve"`},
	})
}

// sessionsRun is what `otter sessions SUB` would run: SUB and its options.
type sessionsRun struct {
	sub string
	o   cli.SessionsOptions
}

func TestSessionsOptions(t *testing.T) {
	newCmd := func(f *cli.Factory, runF func(*sessionsRun) error) *cobra.Command {
		return newCmdSessions(f, func(sub string, o *cli.SessionsOptions) error { return runF(&sessionsRun{sub, *o}) })
	}
	checkOptions(t, newCmd, []optionsCase[sessionsRun]{
		{args: []string{"list"}, want: sessionsRun{sub: "list"}},
		{args: []string{"list", "--all", "--json"}, want: sessionsRun{sub: "list", o: cli.SessionsOptions{All: true, JSON: true}}},
		{args: []string{"export", "0a1b"}, want: sessionsRun{sub: "export", o: cli.SessionsOptions{ID: "0a1b"}}},
		{args: []string{"export", "--json", "0a1b"}, want: sessionsRun{sub: "export", o: cli.SessionsOptions{ID: "0a1b", JSON: true}}},
		{args: []string{"show", "0a1b", "--markdown"}, want: sessionsRun{sub: "show", o: cli.SessionsOptions{ID: "0a1b", Markdown: true}}},
		{args: []string{"search", "redis", "timeout"}, want: sessionsRun{sub: "search", o: cli.SessionsOptions{Query: "redis timeout"}}},
		{args: []string{"rm", "0a1b"}, want: sessionsRun{sub: "rm", o: cli.SessionsOptions{ID: "0a1b"}}},
		{args: []string{"export"}, err: "accepts 1 arg(s), received 0"},
		{args: []string{"export", "0a1b", "--json", "--markdown"}, err: "[json markdown] are set none of the others can be"},
		{args: []string{"list", "--all", "here"}, err: `unknown command "here" for "sessions list"`},
		{args: []string{"lsit"}, err: `unknown command "lsit" for "sessions"`},
	})
}

// TestPromptOptions: -p and the flags that go with it, the session flags
// (-c, -r, --fork-session, --no-session) included.
func TestPromptOptions(t *testing.T) {
	newCmd := func(f *cli.Factory, runF func(*cli.PromptOptions) error) *cobra.Command {
		return newRootCmdRun(f, runF, func(*tuiOptions) error { t.Error("the TUI ran instead of -p"); return nil })
	}
	text := cli.FormatText
	checkOptions(t, newCmd, []optionsCase[cli.PromptOptions]{
		{args: []string{"-p", "hi"}, want: cli.PromptOptions{Prompt: "hi", Format: text}},
		{args: []string{"-p", "-", "--output-format", "stream-json", "--model", "gpt-x", "--provider", "local", "--max-turns", "3", "--allow-tools", "mcp__gh__*,read_page", "--verbose"},
			want: cli.PromptOptions{Prompt: "-", Format: "stream-json", Model: "gpt-x", Provider: "local", MaxTurns: 3, AllowTools: []string{"mcp__gh__*", "read_page"}, Verbose: true}},
		{args: []string{"-c", "-p", "and now?"}, want: cli.PromptOptions{Prompt: "and now?", Format: text, Session: app.SessionOptions{Continue: true}}},
		// -r takes an optional ID; the word after it is the ID.
		{args: []string{"-r", "0a1b", "--fork-session", "-p", "again"},
			want: cli.PromptOptions{Prompt: "again", Format: text, Session: app.SessionOptions{Resume: "0a1b", Fork: true}}},
		{args: []string{"-p", "x", "--no-session", "--dangerously-allow-all"}, want: cli.PromptOptions{Prompt: "x", Format: text, AllowAll: true, Session: app.SessionOptions{Off: true}}},
		{args: []string{"-p", "hi", "--output-format", "xml"}, err: `--output-format "xml": use text, json or stream-json`},
		{args: []string{"-p", "hi", "--max-turns", "-1"}, err: "--max-turns -1: give a positive number"},
		{args: []string{"-p"}, err: `give the prompt as otter -p "PROMPT", or pipe it in with … | otter -p -`},
		{args: []string{"-p", "--model", "m"}, err: "-p takes the prompt as its value, but got the flag --model"},
		{args: []string{"-p", "hi", "--allow-tools", "a", "b"}, err: `unexpected argument "b": with -p the prompt is the value of -p`},
		{args: []string{"-p", "hi", "--fork-session"}, err: "--fork-session needs --continue or --resume"},
		{args: []string{"-p", "hi", "-c", "--no-session"}, err: "--no-session cannot be used with --continue or --resume"},
		{args: []string{"-p", "hi", "-c", "-r", "0a1b"}, err: "give --continue or --resume, not both"},
		{args: []string{"-r", "", "-p", "hi"}, err: `--resume "": the session ID is empty`},
	})
}

// TestTUIOptions: the words and flags that start the TUI.
func TestTUIOptions(t *testing.T) {
	newCmd := func(f *cli.Factory, runF func(*tuiOptions) error) *cobra.Command {
		return newRootCmdRun(f, func(*cli.PromptOptions) error { t.Error("-p ran instead of the TUI"); return nil }, runF)
	}
	checkOptions(t, newCmd, []optionsCase[tuiOptions]{
		{args: nil, want: tuiOptions{}},
		{args: []string{"fix", "the", "tests"}, want: tuiOptions{Prompt: "fix the tests"}},
		{args: []string{"-r"}, want: tuiOptions{Session: app.SessionOptions{Resume: cli.ResumePicker}}},
		{args: []string{"-r", "0a1b", "go", "on"}, want: tuiOptions{Prompt: "go on", Session: app.SessionOptions{Resume: "0a1b"}}},
		{args: []string{"-c", "--model", "gpt-x", "--provider", "local"}, want: tuiOptions{Model: "gpt-x", Provider: "local", Session: app.SessionOptions{Continue: true}}},
		{args: []string{"mpc", "list"}, err: `unknown command "mpc" for "otter"`},
		{args: []string{"--fork-session"}, err: "--fork-session needs --continue or --resume"},
	})
}
