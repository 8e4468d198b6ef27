package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/cli"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/testpeer"
)

// adhocFromFlags parses args as the flags of `otter mcp call` and returns
// the ad hoc server they name.
func adhocFromFlags(t *testing.T, args ...string) (*config.Server, error) {
	t.Helper()
	var conn cli.ConnOptions
	cmd := &cobra.Command{Use: "call"}
	registerConn(cmd, &conn)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	connGiven(cmd, &conn)
	return conn.AdhocServer()
}

func TestAdhocServer(t *testing.T) {
	t.Parallel()
	srv, err := adhocFromFlags(t, "--stdio", `npx -y "@scope/server pkg" --dir 'a b'`)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Transport != "stdio" || srv.Command != "npx" || fmt.Sprintf("%q", srv.Args) != `["-y" "@scope/server pkg" "--dir" "a b"]` || srv.Name != "npx" {
		t.Errorf("--stdio: got %+v", srv)
	}

	srv, err = adhocFromFlags(t, "--url", "http://127.0.0.1:8080/mcp", "--header", "Authorization: Bearer x:y", "--header", "X-Team:otters",
		"--oauth-client-id", "cid", "--oauth-client-secret", "sec", "--oauth-scope", "read", "--oauth-scope", "write")
	if err != nil {
		t.Fatal(err)
	}
	if srv.Transport != "auto" || srv.URL != "http://127.0.0.1:8080/mcp" || srv.Name != "127.0.0.1" ||
		srv.Headers["Authorization"] != "Bearer x:y" || srv.Headers["X-Team"] != "otters" {
		t.Errorf("--url: got %+v", srv)
	}
	if srv.OAuth == nil || srv.OAuth.ClientID != "cid" || srv.OAuth.ClientSecret != "sec" || strings.Join(srv.OAuth.Scopes, " ") != "read write" {
		t.Errorf("--url OAuth: got %+v", srv.OAuth)
	}
	if srv.StartupTimeout.Duration == 0 || srv.Timeout.Duration == 0 || srv.Scope != config.ScopeFlag {
		t.Errorf("--url defaults: got %+v", srv)
	}

	srv, err = adhocFromFlags(t, "--sse", "https://mcp.example.com/sse")
	if err != nil || srv.Transport != "sse" || srv.Name != "mcp.example.com" || srv.OAuth != nil {
		t.Errorf("--sse: got %+v, %v", srv, err)
	}

	if srv, err := adhocFromFlags(t); srv != nil || err != nil {
		t.Errorf("no flags: got %+v, %v", srv, err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--url", "http://a/mcp", "--stdio", "x"}, "--stdio and --url: give only one ad hoc server"},
		{[]string{"--url", "ftp://a/mcp"}, "not an http(s) URL"},
		{[]string{"--url", "http://a/mcp", "--header", "novalue"}, "write it as 'Name: value'"},
		{[]string{"--header", "A: b"}, "--header needs --url or --sse"},
		{[]string{"--stdio", "srv", "--header", "A: b"}, "not --stdio"},
		{[]string{"--stdio", "srv", "--oauth-client-id", "x"}, "not --stdio"},
		{[]string{"--oauth-scope", "read"}, "the --oauth-* flags need --url or --sse"},
		{[]string{"--stdio", `srv "unterminated`}, "--stdio"},
		{[]string{"--stdio", "  "}, "the command is empty"},
	} {
		if _, err := adhocFromFlags(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}

// A new user with no servers is told where to add one, not shown an empty table alone.
func TestListWithoutServersSaysHowToAddOne(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		t.Setenv(v, filepath.Join(home, v))
	}
	t.Chdir(home)
	out, errOut, err := runOtter(t, "mcp", "list")
	if err != nil {
		t.Fatalf("otter mcp list: %v\n%s", err, errOut)
	}
	want := filepath.Join(home, "XDG_CONFIG_HOME", "otter", "config.toml")
	if !strings.Contains(errOut, "No MCP servers are configured") || !strings.Contains(errOut, want) {
		t.Errorf("stderr = %q, want a hint naming %s", errOut, want)
	}
	if !strings.HasPrefix(out, "NAME") {
		t.Errorf("stdout = %q, want the table header", out)
	}
}

// `otter mcp call get_status` reports the configured servers (they start
// for it, as for `otter mcp list`); other built-ins start none.
func TestCallGetStatusShowsServers(t *testing.T) {
	peers := testpeer.Require(t)
	paths := configTestHome(t)
	file := paths.UserConfigFile()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(peers.EverythingConfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runOtter(t, "--cwd", t.TempDir(), "mcp", "call", "get_status", "{}")
	if err != nil {
		t.Fatalf("otter mcp call get_status: %v\n%s", err, errOut)
	}
	var env struct {
		Status string `json:"status"`
		Result struct {
			Servers []struct {
				Name  string `json:"name"`
				State string `json:"state"`
				Tools int    `json:"tools"`
			} `json:"servers"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("get_status output %q: %v", out, err)
	}
	if s := env.Result.Servers; env.Status != "success" || len(s) != 1 || s[0].Name != "everything" || s[0].State != "connected" || s[0].Tools == 0 {
		t.Errorf("get_status = %+v, want the everything server connected with its tools", env)
	}
}

// httpToolServer serves an MCP server over streamable HTTP whose tools
// (named by tools) each answer with the server's name.
func httpToolServer(t *testing.T, name string, tools ...string) string {
	t.Helper()
	server := sdk.NewServer(&sdk.Implementation{Name: name, Version: "1.0.0"}, nil)
	for _, tn := range tools {
		server.AddTool(&sdk.Tool{Name: tn, Description: tn + " of " + name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: tn + " from " + name}}}, nil
			})
	}
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// Servers named my.srv and my_srv give their tools the same prefix; echo,
// which both have, is offered from my.srv only. list counts what is
// offered and names what is not; tools attributes every tool to the server
// that answers it and says which tool was dropped and why; a call of the
// shared name reaches my.srv.
func TestCollidingServers(t *testing.T) {
	paths := configTestHome(t)
	file := paths.UserConfigFile()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("[[mcp.servers]]\nname = \"my_srv\"\nurl = %q\ntransport = \"http\"\n\n[[mcp.servers]]\nname = \"my.srv\"\nurl = %q\ntransport = \"http\"\n",
		httpToolServer(t, "my_srv", "echo", "beta"), httpToolServer(t, "my.srv", "echo", "alpha"))
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()

	out, stderr, err := runOtter(t, "--cwd", work, "mcp", "list", "--json")
	if err != nil {
		t.Fatalf("mcp list: %v\n%s", err, stderr)
	}
	var rows []cli.ServerJSON
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("mcp list --json %q: %v", out, err)
	}
	got := map[string]cli.ServerJSON{}
	for _, r := range rows {
		got[r.Name] = r
	}
	if r := got["my.srv"]; r.State != "connected" || r.Tools != 2 || len(r.NotOffered) != 0 {
		t.Errorf("my.srv row = %+v, want connected, 2 tools, none dropped", r)
	}
	if r := got["my_srv"]; r.State != "connected" || r.Tools != 1 || fmt.Sprint(r.NotOffered) != "[echo]" {
		t.Errorf("my_srv row = %+v, want connected, 1 tool, echo not offered", r)
	}
	out, _, _ = runOtter(t, "--cwd", work, "mcp", "list")
	if !strings.Contains(out, "1 tool(s) not offered (echo): same qualified name as a tool of my.srv") {
		t.Errorf("mcp list does not name the dropped tool:\n%s", out)
	}

	out, stderr, err = runOtter(t, "--cwd", work, "mcp", "tools", "--json")
	if err != nil {
		t.Fatalf("mcp tools: %v\n%s", err, stderr)
	}
	var tools []cli.ToolJSON
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatal(err)
	}
	owner := map[string]string{}
	for _, tj := range tools {
		if tj.Server != "" {
			owner[tj.Name] = tj.Server + "/" + tj.Tool
		}
	}
	want := map[string]string{"mcp__my_srv__alpha": "my.srv/alpha", "mcp__my_srv__beta": "my_srv/beta", "mcp__my_srv__echo": "my.srv/echo"}
	if fmt.Sprint(owner) != fmt.Sprint(want) {
		t.Errorf("mcp tools attributes %v, want %v", owner, want)
	}
	if !strings.Contains(stderr, `tool echo of server "my_srv" is not offered: its name mcp__my_srv__echo is taken by tool echo of server "my.srv"`) {
		t.Errorf("mcp tools does not say which tool was dropped and why:\n%s", stderr)
	}

	// One server: its offered tools, and its dropped one on stderr.
	out, stderr, err = runOtter(t, "--cwd", work, "mcp", "tools", "my_srv", "--json")
	if err != nil || !strings.Contains(out, "mcp__my_srv__beta") || strings.Contains(out, "mcp__my_srv__echo") || !strings.Contains(stderr, `tool echo of server "my_srv" is not offered`) {
		t.Errorf("mcp tools my_srv: %v\n%s\n%s", err, out, stderr)
	}
	out, stderr, err = runOtter(t, "--cwd", work, "mcp", "tools", "my.srv", "--json")
	if err != nil || strings.Contains(stderr, "otter: tool") {
		t.Errorf("mcp tools my.srv reports another server's dropped tool: %v\n%s", err, stderr)
	}
	if out, stderr, err := runOtter(t, "--cwd", work, "mcp", "call", "mcp__my_srv__echo", "{}"); err != nil || !strings.Contains(out, "echo from my.srv") {
		t.Errorf("call of the shared name: %q, %v\n%s", out, err, stderr)
	}
}

// `otter mcp call TOOL` takes a server's own tool name when exactly one
// server has it, as /call does in the TUI (both resolve names through
// tool.Resolve), and names the choices when several have it. The real
// binary, as a script would run it.
func TestCallTakesABareToolNameOneServerHas(t *testing.T) {
	bin := testpeer.Otter(t)
	home, env := otterHome(t)
	cfgDir := filepath.Join(home, "xdg_config_home", "otter")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("[[mcp.servers]]\nname = \"calc\"\nurl = %q\ntransport = \"http\"\n\n[[mcp.servers]]\nname = \"text\"\nurl = %q\ntransport = \"http\"\n",
		httpToolServer(t, "calc", "get-sum", "echo"), httpToolServer(t, "text", "echo"))
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	otter := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = home, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := otter("mcp", "call", "get-sum", `{"a":1,"b":2}`); err != nil || !strings.Contains(out, "get-sum from calc") {
		t.Errorf("mcp call get-sum: %v\n%s", err, out)
	}
	if out, err := otter("mcp", "call", "get-sum"); err != nil || !strings.Contains(out, "get-sum from calc") {
		t.Errorf("mcp call get-sum (no arguments): %v\n%s", err, out)
	}
	out, err := otter("mcp", "call", "echo", "{}")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(out, "echo is ambiguous: 2 servers offer it (mcp__calc__echo, mcp__text__echo)") {
		t.Errorf("mcp call echo (two servers have it): %v\n%s", err, out)
	}
}
