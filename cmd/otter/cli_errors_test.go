package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/oauth/oauthtest"
)

// A typo'd subcommand of a command that only groups others fails with
// exit 2, names the closest subcommand and the help; the group alone still
// prints its help.
func TestUnknownSubcommandFails(t *testing.T) {
	configTestHome(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"mcp", "lsit"}, []string{`unknown command "lsit" for "otter mcp"`, "Did you mean this?\n\tlist\n", "Run 'otter mcp --help' for usage."}},
		{[]string{"mcp", "lsit", "--json"}, []string{`unknown command "lsit" for "otter mcp"`, "\tlist\n"}},
		{[]string{"config", "bogus"}, []string{`unknown command "bogus" for "otter config"`, "Run 'otter config --help' for usage."}},
		{[]string{"config", "valdate"}, []string{`unknown command "valdate" for "otter config"`, "\tvalidate\n"}},
		{[]string{"mpc", "list"}, []string{`unknown command "mpc" for "otter"`, "\tmcp\n", "Run 'otter --help' for usage."}},
	} {
		out, _, err := runOtter(t, tc.args...)
		if err == nil {
			t.Errorf("otter %s: no error; stdout:\n%s", strings.Join(tc.args, " "), out)
			continue
		}
		wantExit(t, err, 2)
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("otter %s: error\n%s\nlacks %q", strings.Join(tc.args, " "), err, w)
			}
		}
	}

	for _, args := range [][]string{{"mcp"}, {"config"}, {"mcp", "--help"}, {"mcp", "help"}} {
		out, _, err := runOtter(t, args...)
		if err != nil || !strings.Contains(out, "Available Commands:") || strings.Contains(out, "otter "+args[0]+" [flags]") {
			t.Errorf("otter %s: %v, want its help (without a usage line of its own):\n%s", strings.Join(args, " "), err, out)
		}
	}
	out, _, err := runOtter(t, "mcp", "help", "call")
	if err != nil || !strings.Contains(out, "otter mcp call [SERVER] TOOL [JSON_ARGS]") {
		t.Errorf("otter mcp help call: %v\n%s", err, out)
	}
}

// A command given the wrong number of arguments shows its usage line.
func TestArgumentErrorsShowUsage(t *testing.T) {
	configTestHome(t)
	_, _, err := runOtter(t, "mcp", "call")
	wantExit(t, err, 2)
	for _, w := range []string{"accepts between 1 and 3 arg(s), received 0", "Usage: otter mcp call [SERVER] TOOL [JSON_ARGS] [flags]"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("otter mcp call: %q lacks %q", err, w)
		}
	}
	_, _, err = runOtter(t, "mcp", "list", "extra")
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), "Usage: otter mcp list [flags]") {
		t.Errorf("otter mcp list extra: %q lacks the usage line", err)
	}
}

// An empty --stdio, --url or --sse (`--stdio "$CMD"` with $CMD unset) is
// an error, not "use the configured servers".
func TestEmptyAdhocServerFlag(t *testing.T) {
	configTestHome(t)
	for _, tc := range []struct{ flag, want string }{
		{"--stdio", "--stdio: the command is empty"},
		{"--url", `--url "" is not an http(s) URL`},
		{"--sse", `--sse "" is not an http(s) URL`},
	} {
		out, _, err := runOtter(t, "mcp", "tools", tc.flag, "")
		if err == nil {
			t.Errorf("otter mcp tools %s '': no error; stdout:\n%.300s", tc.flag, out)
			continue
		}
		wantExit(t, err, 2)
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("otter mcp tools %s '': %v, want %q", tc.flag, err, tc.want)
		}
	}
}

// The --startup-timeout help does not claim the time of a browser login
// counts: it does not.
func TestStartupTimeoutHelp(t *testing.T) {
	t.Parallel()
	out, _, err := runOtter(t, "mcp", "call", "--help")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(out, "--startup-timeout")
	if i < 0 {
		t.Fatalf("no --startup-timeout in:\n%s", out)
	}
	line := strings.Join(strings.Fields(out[i:min(len(out), i+400)]), " ")
	if strings.Contains(line, "browser included") || !strings.Contains(line, "in the browser does not count") {
		t.Errorf("--startup-timeout help: %q", line)
	}
}

// sumServer serves an MCP server over streamable HTTP with the tools sum
// (a, b: numbers), fail (always isError) and big.
func sumServer(t *testing.T) string {
	t.Helper()
	server := sdk.NewServer(&sdk.Implementation{Name: "ts", Version: "1.0.0"}, nil)
	server.AddTool(&sdk.Tool{Name: "sum", InputSchema: map[string]any{"type": "object",
		"properties": map[string]any{"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}},
		"required":   []any{"a", "b"}}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "sum: " + string(req.Params.Arguments)}}}, nil
		})
	server.AddTool(&sdk.Tool{Name: "fail", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "it broke"}}}, nil
		})
	server.AddTool(&sdk.Tool{Name: "big", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "big"}}}, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// Arguments otter's schema check refuses are a usage error (exit 2) that
// names every problem: the tool never ran. A tool's own isError stays
// exit 1.
func TestCallWithArgumentsOffSchema(t *testing.T) {
	configTestHome(t)
	url := sumServer(t)
	work := t.TempDir()
	_, stderr, err := runOtter(t, "--cwd", work, "mcp", "call", "--url", url, "sum", `{"a":"two"}`)
	wantExit(t, err, 2)
	for _, w := range []string{"was not called", "do not match the tool's input schema", "a: want number, got string; b: missing",
		"its arguments: a (number, required), b (number, required)"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("call with bad arguments: %q lacks %q\n%s", err, w, stderr)
		}
	}
	if strings.Contains(err.Error(), "reported an error") {
		t.Errorf("call with bad arguments blames the tool: %q", err)
	}

	out, _, err := runOtter(t, "--cwd", work, "mcp", "call", "--url", url, "sum", `{"a":2,"b":3}`)
	if err != nil || !strings.Contains(out, "sum: ") {
		t.Errorf("valid call: %q, %v", out, err)
	}
	_, _, err = runOtter(t, "--cwd", work, "mcp", "call", "--url", url, "fail")
	wantExit(t, err, 1)
	if !strings.Contains(err.Error(), "reported an error: it broke") {
		t.Errorf("isError: %v", err)
	}
}

// A tool the server has but its denied_tools or allowed_tools keep from
// being offered is named as such, with the setting to change, rather than
// "has no tool".
func TestCallOfAFilteredTool(t *testing.T) {
	paths := configTestHome(t)
	url := sumServer(t)
	file := paths.UserConfigFile()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("[[mcp.servers]]\nname = \"ts\"\nurl = %q\ntransport = \"http\"\ndenied_tools = [\"b*\"]\n\n"+
		"[[mcp.servers]]\nname = \"only\"\nurl = %q\ntransport = \"http\"\nallowed_tools = [\"sum\"]\n", url, url)
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"ts", "big"}, []string{`MCP server ts has a tool "big", but otter does not offer it`, `denied_tools ["b*"]`, file + ":1", "remove the pattern"}},
		{[]string{"mcp__ts__big"}, []string{`MCP server ts has a tool "big"`, `denied_tools ["b*"]`}},
		{[]string{"only", "fail"}, []string{`MCP server only has a tool "fail", but otter does not offer it`, `none of the server's allowed_tools ["sum"]`, file + ":7", "add its name to allowed_tools"}},
		{[]string{"ts", "nope"}, []string{`MCP server ts has no tool "nope"`}},
	} {
		_, _, err := runOtter(t, append([]string{"--cwd", work, "mcp", "call"}, tc.args...)...)
		wantExit(t, err, 2)
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("call %s: %q lacks %q", strings.Join(tc.args, " "), err, w)
			}
		}
	}
}

// Server states read as sentences, and an ad hoc server is named by its
// URL, with the --oauth-* flags it was given in the login advice.
func TestServerStateMessages(t *testing.T) {
	configTestHome(t)
	work := t.TempDir()
	dead := "http://127.0.0.1:1/mcp"
	_, _, err := runOtter(t, "--cwd", work, "mcp", "tools", "--url", dead)
	wantExit(t, err, 2)
	if !strings.HasPrefix(err.Error(), "MCP server "+dead+" failed: ") || strings.Contains(err.Error(), " is failed") {
		t.Errorf("unreachable ad hoc server: %q", err)
	}

	t.Setenv("BROWSER", "")
	as := oauthtest.NewAuthServer(t)
	endpoint := oauthtest.NewProtectedMCP(t, as)
	_, _, err = runOtter(t, "--cwd", work, "mcp", "tools", "--url", endpoint,
		"--oauth-client-id", "cid", "--oauth-client-secret", "s3cret", "--oauth-scope", "read", "--oauth-scope", "write")
	wantExit(t, err, 2)
	msg := err.Error()
	want := "otter mcp login " + endpoint + " --oauth-client-id cid --oauth-client-secret … --oauth-scope read --oauth-scope write"
	if !strings.HasPrefix(msg, "MCP server "+endpoint+" needs a login: ") || !strings.Contains(msg, want) || strings.Contains(msg, "s3cret") {
		t.Errorf("ad hoc server that needs a login: %q\nwant it named by URL, with `%s`, and no secret", msg, want)
	}
}

// `otter mcp tools` describes a tool's arguments in the order the server
// wrote them (required ones first), with an enum's names: the schema is
// app's orderedSchema, sent as raw JSON so that its order reaches otter.
func TestMCPToolsDescribesArgumentsInTheServersOrder(t *testing.T) {
	configTestHome(t)
	server := sdk.NewServer(&sdk.Implementation{Name: "ts", Version: "1.0.0"}, nil)
	server.AddTool(&sdk.Tool{Name: "place", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"zone":{"type":"string","enum":["eu","us"],"enumNames":["Europe","United States"]},
		"name":{"type":"string"},
		"count":{"type":"integer","default":2}},"required":["count"]}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "placed"}}}, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(ts.Close)
	out, stderr, err := runOtter(t, "--cwd", t.TempDir(), "mcp", "tools", "--url", ts.URL)
	if err != nil {
		t.Fatalf("mcp tools: %v\n%s", err, stderr)
	}
	want := `arguments: count (integer, required), zone (string, one of "eu" "Europe", "us" "United States"), name (string)`
	if !strings.Contains(out, want) {
		t.Errorf("mcp tools:\n%s\nwant %q", out, want)
	}
}
