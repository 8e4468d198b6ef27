package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/mcphost"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/session"
	"github.com/otter-sh/otter/internal/tool"
)

// testParts are otter's parts (internal/appparts' Default, which imports
// app and so cannot be imported by its tests).
var testParts = Parts{
	NewServers:   func(cfg config.MCP, o servers.Options) servers.Host { return mcphost.New(cfg, o) },
	Probe:        mcphost.Probe,
	OpenSessions: session.OpenStore,
}

// settleTimeout bounds waiting for servers: generous, for liveness only.
const settleTimeout = time.Minute

// newTestServer serves an MCP server over streamable HTTP with two tools:
// add, and survey, which asks the client for input (elicitation) and
// returns the answer as JSON text.
func newTestServer(t *testing.T, name string) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: name, Version: "1.0.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Adds a and b"},
		func(_ context.Context, _ *sdk.CallToolRequest, in struct{ A, B int }) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint(in.A + in.B)}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "survey", Description: "Asks the user"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{
				Message: "Tell us about you",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{
					"name":{"type":"string","default":"Ada"},
					"age":{"type":"integer","default":36},
					"likes":{"type":"string","enum":["tea","coffee"],"default":"tea"},
					"subscribe":{"type":"boolean","default":false}}}`),
			})
			if err != nil {
				return nil, nil, err
			}
			b, _ := json.Marshal(res)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}, nil, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// testPaths are fresh XDG directories with config.toml holding toml.
func testPaths(t *testing.T, toml string) config.Paths {
	t.Helper()
	dir := t.TempDir()
	p := config.Paths{
		ConfigDir: filepath.Join(dir, "config"),
		DataDir:   filepath.Join(dir, "data"),
		StateDir:  filepath.Join(dir, "state"),
		CacheDir:  filepath.Join(dir, "cache"),
	}
	writeConfig(t, p, toml)
	return p
}

func writeConfig(t *testing.T, p config.Paths, toml string) {
	t.Helper()
	if err := os.MkdirAll(p.ConfigDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.UserConfigFile(), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
}

func serverTOML(name, url string) string {
	return fmt.Sprintf("[[mcp.servers]]\nname = %q\nurl = %q\ntransport = \"http\"\n", name, url)
}

func startApp(t *testing.T, opts Options) *App {
	t.Helper()
	if opts.WorkDir == "" {
		opts.WorkDir = t.TempDir()
	}
	opts.Parts = testParts
	a, err := New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	a.Start(t.Context())
	ctx, cancel := context.WithTimeout(t.Context(), settleTimeout)
	defer cancel()
	if err := a.mcp.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	return a
}

func toolNames(s *tool.Set) []string {
	var names []string
	for _, e := range s.Entries() {
		names = append(names, e.Name)
	}
	return names
}

func callText(t *testing.T, a *App, name, args string) string {
	t.Helper()
	res, err := a.tools.Call(t.Context(), name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("call %s: %+v", name, res)
	}
	return res.Content[0].(*sdk.TextContent).Text
}

// acceptDefaults is a front end that accepts every form with the values
// its schema gives as defaults (as the CLI's --elicit accept-defaults
// does), and answers nothing else.
type acceptDefaults struct{ ask.Asker }

func (acceptDefaults) Elicit(_ context.Context, req ask.Elicitation) (ask.ElicitReply, error) {
	var schema struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(req.Schema, &schema); err != nil {
		return ask.ElicitReply{}, err
	}
	content := map[string]any{}
	for name, p := range schema.Properties {
		if p.Default != nil {
			content[name] = p.Default
		}
	}
	return ask.ElicitReply{Action: ask.Accept, Content: content}, nil
}

func TestAppToolsAndCall(t *testing.T) {
	url := newTestServer(t, "calc")
	paths := testPaths(t, serverTOML("calc", url))
	a := startApp(t, Options{Paths: paths, Asker: acceptDefaults{}})

	names := toolNames(a.tools)
	for _, want := range []string{"scrape_page", "get_status", "mcp__calc__add", "mcp__calc__survey"} {
		if !slices.Contains(names, want) {
			t.Errorf("tool %s missing from %v", want, names)
		}
	}
	if got := callText(t, a, "mcp__calc__add", `{"A":2,"B":3}`); got != "5" {
		t.Errorf("add: got %q, want 5", got)
	}
	// The elicitation goes through the Asker: accept-defaults answers
	// with the schema's defaults.
	var reply struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal([]byte(callText(t, a, "mcp__calc__survey", `{}`)), &reply); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "Ada", "age": 36.0, "likes": "tea", "subscribe": false}
	if reply.Action != "accept" || fmt.Sprint(reply.Content) != fmt.Sprint(want) {
		t.Errorf("survey: got %+v, want accept with %v", reply, want)
	}
	// get_status sees the manager.
	if got := callText(t, a, "get_status", `{}`); !strings.Contains(got, `"calc"`) {
		t.Errorf("get_status does not report the server calc:\n%s", got)
	}
}

func TestAppWithoutAskerOffersNoElicitation(t *testing.T) {
	url := newTestServer(t, "calc")
	a := startApp(t, Options{Paths: testPaths(t, serverTOML("calc", url))})
	res, err := a.tools.Call(t.Context(), "mcp__calc__survey", json.RawMessage(`{}`))
	if err == nil && !res.IsError {
		t.Fatalf("survey without an Asker: got %+v, want an error (the client offers no elicitation)", res)
	}
}

func TestAppSelectServers(t *testing.T) {
	urlA, urlB := newTestServer(t, "a"), newTestServer(t, "b")
	paths := testPaths(t, serverTOML("a", urlA)+serverTOML("b", urlB))
	a := startApp(t, Options{Paths: paths, SelectServers: func(cs []config.Server) ([]config.Server, error) {
		return slices.DeleteFunc(cs, func(s config.Server) bool { return s.Name != "b" }), nil
	}})
	var got []string
	for _, st := range a.mcp.Statuses() {
		got = append(got, st.Name+":"+string(st.State))
	}
	if fmt.Sprint(got) != "[b:connected]" {
		t.Errorf("statuses %v, want only b, connected", got)
	}

	_, err := New(t.Context(), Options{Parts: testParts, Paths: paths, WorkDir: t.TempDir(),
		SelectServers: func([]config.Server) ([]config.Server, error) { return nil, fmt.Errorf("no such server") }})
	if err == nil || !strings.Contains(err.Error(), "no such server") {
		t.Errorf("New with a failing SelectServers: err = %v", err)
	}
}

func TestAppReload(t *testing.T) {
	urlA, urlB := newTestServer(t, "a"), newTestServer(t, "b")
	paths := testPaths(t, serverTOML("a", urlA))
	a := startApp(t, Options{Paths: paths})

	writeConfig(t, paths, serverTOML("a", urlA)+serverTOML("b", urlB))
	diff, err := a.Reload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(diff.Added, diff.Unchanged, diff.Removed, diff.Changed) != "[b] [a] [] []" {
		t.Errorf("reload diff %+v, want b added and a unchanged", diff)
	}
	if _, ok := a.cfg.Server("b"); !ok {
		t.Error("App.Config does not hold the reloaded config")
	}
	ctx, cancel := context.WithTimeout(t.Context(), settleTimeout)
	defer cancel()
	if err := a.mcp.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, a, "mcp__b__add", `{"A":1,"B":1}`); got != "2" {
		t.Errorf("add on the new server: %q", got)
	}

	// A broken config is reported with its file and line and changes nothing.
	writeConfig(t, paths, serverTOML("a", urlA)+"[[mcp.servers]]\nname = \n")
	if _, err := a.Reload(t.Context()); err == nil || !strings.Contains(err.Error(), paths.UserConfigFile()+":") {
		t.Errorf("reload of a broken config: err = %v, want one naming %s:LINE", err, paths.UserConfigFile())
	}
	if _, ok := a.cfg.Server("b"); !ok {
		t.Error("a failed reload replaced the config")
	}
	if st, _ := a.mcp.Status("b"); st.State != servers.StateConnected {
		t.Errorf("a failed reload touched server b: %s", st.State)
	}
}

func TestNewConfigError(t *testing.T) {
	paths := testPaths(t, "[mcp\n")
	_, err := New(t.Context(), Options{Parts: testParts, Paths: paths, WorkDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), paths.UserConfigFile()) {
		t.Errorf("err = %v, want one naming %s", err, paths.UserConfigFile())
	}
}

func TestCloseTwice(t *testing.T) {
	a := startApp(t, Options{Paths: testPaths(t, "")})
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
