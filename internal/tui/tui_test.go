package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
)

// A turn with a tool call: the model's streamed text, the call with its
// arguments, progress and result, the answer after it, and the tokens the
// model reported. The forecast waits for the test while it runs: the
// status bar shows the first model call's tokens then, as the share of the
// context window they fill, and /cost counts them. The block's duration is
// the one the agent measured and saved with the session.
func TestChatTurnWithToolCall(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	b := &fakeHost{
		tools: []tool.Entry{entry("wx", "forecast", "The weather in a city", `{"type":"object","properties":{"city":{"type":"string"}}}`,
			&sdk.ToolAnnotations{ReadOnlyHint: true})},
		call: func(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
			tool.ReportProgress(ctx, tool.Progress{Progress: 1, Total: 2, Message: "fetching"})
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return tool.TextResult("Sunny, 21°C\nwind 3 m/s"), nil
		},
		replies: []llmtest.Reply{
			{Text: []string{"Let me check **the ", "forecast**."}, Calls: []llmtest.Call{{ID: "t1", Name: "mcp__wx__forecast", Args: `{"city":"Oslo"}`}},
				InputTokens: 1200, OutputTokens: 340},
			{Text: []string{"It is sunny in Oslo."}},
		},
	}
	h := start(t, b)
	h.waitFor("/help")
	h.enterLine("weather in Oslo?")
	// 1,200 + 340 tokens of the 8,192 otter assumes for a model it does
	// not know: 19%.
	used, window := 1200+340, 8192
	share := fmt.Sprintf("%d%% of 8.2k?", (used*100+window/2)/window)
	h.waitFor("› weather in Oslo?", "Let me check the forecast.", "mcp__wx__forecast", `{"city":"Oslo"}`, "fetching", share)
	close(release)
	h.waitFor("✓", "Sunny, 21°C", "It is sunny in Oslo.")
	s := h.waitGone("working") // the turn ends
	if !b.did("send weather in Oslo?") {
		t.Errorf("the message did not reach the model; it got %q", b.sent())
	}
	if strings.Count(s, "It is sunny in Oslo.") != 1 {
		t.Errorf("the streamed final text shows more than once:\n%s", s)
	}
	if want := "✓ " + fmtDuration(tuiToolElapsed(t, b, "t1")); !strings.Contains(s, want) {
		t.Errorf("the tool block does not show %q, the duration the agent measured:\n%s", want, s)
	}
	h.enterLine("/cost")
	h.waitWords("tokens and cost in this session", "fake/m1: 2 calls", "input 1.2k", "output 340")
}

// tuiToolElapsed is how long the tool call id ran, as the agent measured
// it and the session saved it.
func tuiToolElapsed(t *testing.T, b *fakeHost, id string) time.Duration {
	t.Helper()
	ctx := context.Background()
	store, err := b.app.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		entries, err := store.Entries(ctx, b.conv.SessionID(), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			for _, r := range e.Message.ToolResults {
				if r.CallID == id && r.Elapsed > 0 {
					return r.Elapsed
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session holds no result of the tool call %s", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestMCPTableFailedAndConnected(t *testing.T) {
	t.Parallel()
	b := &fakeHost{
		servers: []servers.Status{
			{Name: "alpha", Transport: "stdio", State: servers.StateConnected, Tools: 3, Calls: 12, Errors: 1, MedianLatency: 42 * time.Millisecond, ServerInfo: "alpha 1.0"},
			{Name: "broken", Transport: "stdio", State: servers.StateFailed, Error: `starting "nope": executable file not found in $PATH`,
				StderrTail: []string{"boot: reading config", "fatal: no such file"}},
		},
		tools: []tool.Entry{entry("alpha", "a1", "", `{}`, nil), entry("alpha", "a2", "", `{}`, nil), entry("alpha", "a3", "", `{}`, nil)},
	}
	h := start(t, b)
	h.waitFor(`broken could not start: starting "nope"`, "/mcp for details") // said once, not only counted in the status bar
	h.enterLine("/mcp")
	s := h.waitFor("MCP servers", "1/2 connected", "alpha", "connected", "broken", "failed", "42ms", "alpha 1.0")
	if strings.Contains(s, "fatal: no such file") {
		t.Errorf("the stderr of an unselected server is shown:\n%s", s)
	}
	h.press("down")
	h.waitFor("last error: starting \"nope\"", "fatal: no such file", "boot: reading config")
	h.press("r")
	h.waitFor("reconnect broken: done")
	if !b.did("reconnect broken") {
		t.Errorf("reconnect did not reach the core; actions %v", b.actions)
	}
	h.press("up", "e")
	h.waitFor("disable alpha: done")
	if !b.did("enable alpha false") {
		t.Errorf("disable did not reach the core; actions %v", b.actions)
	}
	h.press("esc")
	h.waitGone("1/2 connected")
	h.waitFor(fmt.Sprintf("1/2 servers · %d tools", len(b.app.ToolEntries()))) // alpha's 3 and otter's built-ins
}

// /mcp tools lists every tool, otter's built-ins (scrape_page among them)
// and the servers'; typing filters it by name, Enter shows a tool, and
// /mcp tools SERVER lists that server's only.
func TestMCPToolsFilter(t *testing.T) {
	t.Parallel()
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true}
	b := &fakeHost{tools: []tool.Entry{
		entry("everything", "echo", "Echoes back the input", `{"type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"]}`, ro),
		entry("everything", "add", "Adds two numbers", `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`, nil),
	}}
	h := start(t, b)
	h.enterLine("/mcp tools")
	h.waitFor("Tools", fmt.Sprintf("%d shown", len(b.app.ToolEntries())), "filter: type to filter tool names", "scrape_page", "mcp__everything__echo", "mcp__everything__add")
	h.typeText("ech")
	s := h.waitFor("1 shown", "mcp__everything__echo")
	if strings.Contains(s, "mcp__everything__add") || strings.Contains(s, "scrape_page") {
		t.Errorf("the filter kept tools that do not match:\n%s", s)
	}
	h.press("enter")
	h.waitFor("server everything, tool echo", "Echoes back the input", "annotations: read-only", "input schema:", `"message"`, "Message to echo")
	h.press("esc", "esc")
	h.enterLine("/mcp tools everything")
	s = h.waitFor("Tools of everything", "2 shown")
	if strings.Contains(s, "scrape_page") {
		t.Errorf("/mcp tools everything lists a built-in:\n%s", s)
	}
	h.press("esc")
	h.enterLine("/mcp tools nosuch")
	h.waitFor(`no MCP server is named "nosuch"`)
}

func TestMCPReloadShowsAddedServer(t *testing.T) {
	t.Parallel()
	b := &fakeHost{servers: []servers.Status{{Name: "alpha", Transport: "stdio", State: servers.StateConnected}}}
	b.reload = func() servers.ReloadDiff {
		b.mu.Lock()
		b.servers = append(b.servers, servers.Status{Name: "beta", Transport: "http", State: servers.StateConnected, Tools: 2})
		b.mu.Unlock()
		return servers.ReloadDiff{Added: []string{"beta"}, Unchanged: []string{"alpha"}}
	}
	h := start(t, b)
	h.enterLine("/mcp reload")
	h.waitFor("config reloaded: added beta · 1 unchanged", "2/2 servers")
	h.enterLine("/mcp")
	h.waitFor("beta", "http", "2/2 connected")

	// An automatic reload (the file watcher) is announced the same way.
	h.press("esc")
	h.ui.Notify(Reloaded{Diff: servers.ReloadDiff{Changed: []string{"alpha"}}, Auto: true})
	h.waitFor("config changed on disk; reloaded: changed alpha")

	// A reload that changes only [agent] or [providers] says so: the
	// config file now names another provider and model.
	b.reload = func() servers.ReloadDiff {
		return servers.ReloadDiff{Unchanged: []string{"alpha", "beta"}}
	}
	writeTestFile(t, b.app.Paths.UserConfigFile(), fmt.Sprintf("[agent]\nprovider = \"local\"\nmodel = \"qwen3:8b\"\n[providers.local]\ntype = \"openai\"\nbase_url = %q\napi_key = \"k\"\n", b.model.URL), 0o600)
	h.enterLine("/mcp reload")
	h.waitFor("config reloaded: no server changed · 2 unchanged · model local/qwen3:8b from the next message")
}

const elicitSchema = `{
  "type": "object",
  "properties": {
    "name": {"type": "string", "title": "Your name", "default": "Ada"},
    "email": {"type": "string", "format": "email"},
    "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 36},
    "subscribe": {"type": "boolean", "default": true},
    "color": {"type": "string", "enum": ["red", "green", "blue"], "default": "green"},
    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "default": ["a", "c"]}
  },
  "required": ["name"]
}`

func TestElicitationAcceptedWithDefaults(t *testing.T) {
	t.Parallel()
	h := start(t, &fakeHost{})
	h.waitFor("/help")
	type result struct {
		r   ask.ElicitReply
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := h.ui.Elicit(context.Background(), ask.Elicitation{Server: "everything", Message: "Tell me about you", Mode: "form", Schema: json.RawMessage(elicitSchema)})
		done <- result{r, err}
	}()
	h.waitFor("everything asks for input", "Tell me about you", "Your name *", "Ada", "ctrl+d decline")
	var got result
	for i := 0; ; i++ {
		select {
		case got = <-done:
		case <-time.After(200 * time.Millisecond):
			if i > 100 {
				t.Fatalf("the form never completed; screen:\n%s", h.screen())
			}
			h.press("enter")
			continue
		}
		break
	}
	if got.err != nil || got.r.Action != ask.Accept {
		t.Fatalf("reply = %+v, %v; want accept", got.r, got.err)
	}
	want := map[string]any{"name": "Ada", "age": int64(36), "subscribe": true, "color": "green", "tags": []any{"a", "c"}}
	if !reflect.DeepEqual(got.r.Content, want) {
		t.Errorf("content = %#v\nwant      %#v", got.r.Content, want)
	}
	h.waitFor("sent the requested input to everything")
}

func TestElicitationValidationAndDecline(t *testing.T) {
	t.Parallel()
	h := start(t, &fakeHost{})
	h.waitFor("/help")
	done := make(chan ask.ElicitReply, 1)
	go func() {
		r, _ := h.ui.Elicit(context.Background(), ask.Elicitation{Server: "shop", Message: "Quantity?", Mode: "form",
			Schema: json.RawMessage(`{"type":"object","properties":{"qty":{"type":"integer","minimum":1,"maximum":5}},"required":["qty"]}`)})
		done <- r
	}()
	h.waitFor("shop asks for input", "qty *")
	h.typeText("9")
	h.press("enter")
	h.waitFor("must be at most 5")
	h.press("ctrl+d")
	if r := recv(t, done, "reply after ctrl+d"); r.Action != ask.Decline || r.Content != nil {
		t.Errorf("reply = %+v, want decline without content", r)
	}
	h.waitFor("declined shop's request for input")

	// The form ends with Accept / Decline / Cancel to choose from.
	go func() {
		r, _ := h.ui.Elicit(context.Background(), ask.Elicitation{Server: "shop", Message: "Gift wrap?", Mode: "form",
			Schema: json.RawMessage(`{"type":"object","properties":{"note":{"type":"string"}}}`)})
		done <- r
	}()
	h.waitFor("Gift wrap?", "Respond", "Accept", "Decline", "Cancel")
	h.press("enter", "down", "enter")
	if r := recv(t, done, "reply after choosing Decline"); r.Action != ask.Decline || r.Content != nil {
		t.Errorf("reply = %+v, want decline chosen in the form", r)
	}
}

func TestElicitationContextDoneDismissesForm(t *testing.T) {
	t.Parallel()
	h := start(t, &fakeHost{})
	h.waitFor("/help")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.ui.Elicit(ctx, ask.Elicitation{Server: "s", Message: "Anything?", Mode: "form", Schema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)})
		done <- err
	}()
	h.waitFor("s asks for input")
	cancel()
	if err := recv(t, done, "Elicit's return"); !errors.Is(err, context.Canceled) {
		t.Errorf("Elicit returned %v, want context.Canceled", err)
	}
	h.waitGone("s asks for input")
}

// The model calls a tool that may delete data (it has no annotations):
// the agent asks, the person denies, the tool does not run and the model
// is told.
func TestPermissionPromptDenied(t *testing.T) {
	t.Parallel()
	b := &fakeHost{
		tools: []tool.Entry{entry("fs", "delete_file", "Deletes a file", `{"type":"object","properties":{"path":{"type":"string"}}}`, nil)},
		call: func(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
			return tool.TextResult("deleted"), nil
		},
		replies: []llmtest.Reply{
			{Calls: []llmtest.Call{{ID: "1", Name: "mcp__fs__delete_file", Args: `{"path":"/tmp/x"}`}}},
			{Text: []string{"I was not allowed to delete it."}},
		},
	}
	h := start(t, b)
	h.enterLine("delete /tmp/x")
	h.waitFor("Allow mcp__fs__delete_file?", "may modify or delete data", `"path": "/tmp/x"`,
		"Allow once", "Allow for this session", "Always allow", "Deny")
	h.press("down", "down", "down", "enter")
	s := h.waitFor("I was not allowed to delete it.")
	if strings.Contains(s, "deleted") && !strings.Contains(s, "not allowed to delete") {
		t.Errorf("the tool ran although it was denied:\n%s", s)
	}
	if b.did(`call mcp__fs__delete_file {"path":"/tmp/x"}`) {
		t.Error("the tool ran although it was denied")
	}
	reqs := b.model.Requests()
	if res := reqs[len(reqs)-1].LastToolResults(); len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].Text, "denied") {
		t.Errorf("the model was told %+v, want that the call was denied", res)
	}
}

func TestNeedsAuthPrompt(t *testing.T) {
	t.Parallel()
	h := start(t, &fakeHost{})
	h.waitFor("/help")
	done := make(chan ask.LoginReply, 1)
	go func() {
		r, _ := h.ui.Login(context.Background(), ask.Login{Server: "github", AuthURL: "https://auth.example/authorize?client_id=otter", CanPasteRedirect: true})
		done <- r
	}()
	h.waitFor("server github needs authorization", "https://auth.example/authorize?client_id=otter",
		"Open browser", "Copy URL", "Paste redirect URL", "Later")
	h.press("down", "down", "enter")
	h.waitFor("Paste the URL your browser was redirected to")
	h.typeText("http://127.0.0.1:8976/callback?code=abc&state=xyz")
	h.press("enter")
	want := ask.LoginReply{Choice: ask.LoginPasteRedirect, RedirectURL: "http://127.0.0.1:8976/callback?code=abc&state=xyz"}
	if r := recv(t, done, "login reply"); r != want {
		t.Errorf("reply = %+v, want %+v", r, want)
	}
	h.waitFor("finishing github's authorization")
}

// Esc while the model's tool call runs cancels the call's context; the
// block says canceled, once, and the turn ends.
func TestEscCancelsSlowTool(t *testing.T) {
	t.Parallel()
	sawCancel := make(chan struct{})
	b := &fakeHost{
		tools: []tool.Entry{entry("everything", "longRunningOperation", "Runs for a while, reporting progress",
			`{"type":"object","properties":{"duration":{"type":"number"}}}`, &sdk.ToolAnnotations{ReadOnlyHint: true})},
		call: func(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
			tool.ReportProgress(ctx, tool.Progress{Progress: 1, Total: 10, Message: "step 1 of 10"})
			<-ctx.Done()
			close(sawCancel)
			return nil, ctx.Err()
		},
		replies: []llmtest.Reply{{Calls: []llmtest.Call{{ID: "slow", Name: "mcp__everything__longRunningOperation", Args: `{"duration":600}`}}}},
	}
	h := start(t, b)
	h.enterLine("run the long operation")
	h.waitFor("mcp__everything__longRunningOperation", "running", "step 1 of 10", "working · esc cancels")
	h.press("esc")
	recv(t, sawCancel, "the turn's context canceled by esc")
	h.waitFor("canceled")
	s := h.waitGone("working · esc cancels")
	if strings.Contains(s, "running ") {
		t.Errorf("the tool block still shows running after the turn ended:\n%s", s)
	}
	if n := strings.Count(s, "canceled"); n != 1 {
		t.Errorf("canceled shows %d times, want once (the tool block):\n%s", n, s)
	}
}

// With no provider configured, a message is answered with the core's
// help on configuring one (an API key in the environment, or a
// [providers.NAME] table), and /mcp still works.
func TestNoProviderAnswersWithHelp(t *testing.T) {
	t.Parallel()
	b := &fakeHost{
		provider: Provider{Help: "none configured"},
		servers:  []servers.Status{{Name: "alpha", Transport: "stdio", State: servers.StateConnected}},
	}
	h := start(t, b)
	h.waitFor("no provider")
	h.enterLine("hello")
	h.waitFor("› hello", "[providers.local]", "ANTHROPIC_API_KEY")
	if b.did("send hello") || len(b.model.Requests()) > 0 {
		t.Error("a message was sent with no provider")
	}
	h.enterLine("/mcp")
	h.waitFor("MCP servers", "alpha")
}

func TestCallFormShowsRawResult(t *testing.T) {
	t.Parallel()
	b := &fakeHost{
		tools: []tool.Entry{entry("everything", "echo", "Echoes back the input",
			`{"type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"]}`, nil)},
		call: func(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
			var a struct{ Message string }
			_ = json.Unmarshal(args, &a)
			return tool.TextResult("Echo: " + a.Message), nil
		},
	}
	h := start(t, b)
	h.typeText("/call mcp__every")
	h.press("tab")
	h.waitFor("/call mcp__everything__echo")
	h.press("enter")
	h.waitFor("/call mcp__everything__echo", "Echoes back the input", "message *")
	h.typeText("hi there")
	h.press("enter")
	h.waitFor("⎿ Echo: hi there")
	if !b.did(`call mcp__everything__echo {"message":"hi there"}`) {
		t.Errorf("actions = %v", b.actions)
	}
	// Direct JSON arguments skip the form.
	h.enterLine(`/call mcp__everything__echo {"message":"again"}`)
	h.waitFor("⎿ Echo: again")
	// The server's own name works when only one server has such a tool.
	h.enterLine(`/call echo {"message":"short name"}`)
	h.waitFor("⎿ Echo: short name")
}

func TestTabCompletionAndHistory(t *testing.T) {
	t.Parallel()
	b := &fakeHost{prompts: []servers.Prompt{{Server: "everything", Name: "simple_prompt", Description: "A prompt"}}}
	h := start(t, b)
	h.typeText("/mcp t")
	h.press("tab")
	h.waitFor("› /mcp tools")
	h.press("esc")
	h.enterLine("") // runs /mcp tools
	// otter's built-ins: no server is configured
	h.waitFor(fmt.Sprintf("%d shown", len(b.app.ToolEntries())))
	h.press("esc")
	// Tab's candidates leave with the line they completed.
	h.typeText("/mcp")
	h.press("tab")
	h.waitFor("tab again cycles")
	h.press("enter")
	h.waitFor("MCP servers")
	if s := h.waitGone("tab again cycles"); strings.Contains(s, "/mcp reload") {
		t.Errorf("the candidates still show after the command ran:\n%s", s)
	}
	h.press("esc")
	h.typeText("/mcp__")
	h.press("tab")
	h.waitFor("/mcp__everything__simple_prompt")
	h.press("enter")
	h.waitFor("› /mcp__everything__simple_prompt", "prompt text for") // the prompt, sent whole
	if !b.did("prompt everything simple_prompt map[]") {
		t.Errorf("actions = %v", b.actions)
	}
	if !b.waitDid("send prompt text for ") {
		t.Errorf("the prompt's text did not reach the model; it got %q", b.sent())
	}
	h.press("up")
	tuiWaitInput(h, "› /mcp__everything__simple_prompt")
	h.press("up", "up")
	tuiWaitInput(h, "› /mcp tools")
}

// tuiWaitInput waits until the input's first line shows want (the
// transcript may show the same words).
func tuiWaitInput(h *harness, want string) {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		s = h.screen()
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		for i := len(lines) - 1; i > 0; i-- { // the input is under the last rule
			if strings.HasPrefix(lines[i-1], "────") {
				if strings.Contains(lines[i], want) {
					return
				}
				break
			}
		}
		h.nextChange()
	}
	h.t.Fatalf("the input never showed %q; last screen:\n%s", want, s)
}

// tuiProjectConfig is a project's .otter/config.toml that runs or applies
// something of each kind trust covers: a server (in a directory of its
// own, with an environment variable), settings (a model and a permission)
// and a hook.
const tuiProjectConfig = `[agent]
model = "m2"

[permissions]
"mcp__proj__*" = "allow"

[[mcp.servers]]
name = "proj"
command = "./run-server"
args = ["--stdio"]
cwd = "sub"
env = { TOKEN = "t0ken" }

[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = "./again.sh"
`

// tuiProject is a new project directory whose .otter/config.toml is
// config, not trusted yet. Its path is short, so that the prompt's first
// line holds it whole.
func tuiProject(t *testing.T, config string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "proj")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	writeTestFile(t, filepath.Join(dir, ".otter", "config.toml"), config, 0o644)
	return dir
}

// tuiProjStarts is the fake MCP host's reload once the project is trusted:
// its server proj starts.
func tuiProjStarts(b *fakeHost) func() servers.ReloadDiff {
	return func() servers.ReloadDiff {
		b.mu.Lock()
		b.servers = append(b.servers, servers.Status{Name: "proj", Transport: "stdio", State: servers.StateConnected})
		b.mu.Unlock()
		return servers.ReloadDiff{Added: []string{"proj"}}
	}
}

// tuiTrusted reports whether dir is trusted in b's App, and whether what
// its configuration runs now is all approved.
func tuiTrusted(t *testing.T, b *fakeHost, dir string) (trusted, approved bool) {
	t.Helper()
	ok, err := b.app.Paths.IsTrusted(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := b.app.TrustReport()
	return ok, ok && r.Trusted && r.Empty()
}

// An untrusted project's prompt lists what trusting it enables, each
// server with its command line and each setting and hook; y trusts it:
// the trust is recorded, the configuration reloaded and its server starts.
func TestTrustPrompt(t *testing.T) {
	t.Parallel()
	dir := tuiProject(t, tuiProjectConfig)
	b := &fakeHost{workDir: dir}
	b.reload = tuiProjStarts(b)
	h := start(t, b)
	h.waitFor("This project is not trusted yet: "+dir, "Trusting it lets otter run its MCP servers:",
		"./run-server --stdio (in sub; env TOKEN)", "and apply its settings, commands, skills and hooks:",
		"settings config.toml: agent.model, permissions mcp__proj__* = allow", "hook Stop: ./again.sh", "Trust this directory?")
	h.press("y")
	h.waitFor("trusted "+dir+"; starting its servers", "config reloaded: added proj")
	if trusted, approved := tuiTrusted(t, b, dir); !trusted || !approved {
		t.Errorf("after y the project is trusted: %v, with all it runs approved: %v", trusted, approved)
	}
}

// Issue 34 item 16: in a trusted project, the panel lists what changed
// since and asks again; "not now" keeps it off and says the rest runs.
//
// The project was trusted as it was (by an earlier otter: the trust is
// recorded before the TUI starts), then a server and a hook were added.
func TestTrustPromptForChanges(t *testing.T) {
	t.Parallel()
	dir := tuiProject(t, "[[mcp.servers]]\nname = \"proj\"\ncommand = \"./run-server\"\n")
	b := &fakeHost{workDir: dir}
	u := New(Options{ImageDir: t.TempDir()})
	conv := b.build(t, u)
	if err := b.app.TrustReport().Approve(b.app.Paths); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, ".otter", "config.toml"), `[[mcp.servers]]
name = "proj"
command = "./run-server"

[[mcp.servers]]
name = "added"
command = "sh"
args = ["-c", "touch /tmp/x"]

[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = "./added.sh"
`, 0o644)
	if _, err := b.app.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := runHarness(t, u, newModel(u, conv), b)
	h.waitFor("configuration changed since you trusted it: "+dir, "added: sh -c touch /tmp/x (new)",
		"hook Stop: ./added.sh (new)", "Trust these changes?")
	h.press("esc")
	h.waitFor("what changed in " + dir + " stays off")
	if trusted, approved := tuiTrusted(t, b, dir); !trusted || approved {
		t.Errorf("after esc the project is trusted: %v (want true), with the changes approved: %v (want false)", trusted, approved)
	}
}

// Esc on the trust prompt is "not now", and says so.
func TestTrustPromptEsc(t *testing.T) {
	t.Parallel()
	dir := tuiProject(t, "[[mcp.servers]]\nname = \"proj\"\ncommand = \"./run-server\"\nargs = [\"--stdio\"]\n")
	b := &fakeHost{workDir: dir}
	b.reload = tuiProjStarts(b)
	h := start(t, b)
	h.waitFor("Trust this directory?", "proj: ./run-server --stdio")
	h.press("esc")
	h.waitFor(dir+" is not trusted", "/trust")
	if trusted, _ := tuiTrusted(t, b, dir); trusted {
		t.Error("Esc trusted the project")
	}
	// Changed minds: /trust asks again.
	h.enterLine("/trust")
	h.waitFor("Trust this directory?")
	h.press("y")
	h.waitFor("trusted "+dir, "config reloaded: added proj") // the notice comes before the core's answer
	if trusted, approved := tuiTrusted(t, b, dir); !trusted || !approved {
		t.Errorf("/trust then Trust: the project is trusted: %v, with all it runs approved: %v", trusted, approved)
	}
}

func TestCtrlCTwiceQuits(t *testing.T) {
	t.Parallel()
	h := start(t, &fakeHost{})
	h.waitFor("/help")
	h.press("ctrl+c")
	h.waitFor("press ctrl+c again to quit")
	h.press("ctrl+c")
	h.tm.WaitFinished(t, teatest.WithFinalTimeout(20*time.Second))
	h.ui.finish() // what Run does when the program returns
	if _, err := h.ui.ApproveTool(context.Background(), ask.Permission{Tool: "x"}); !errors.Is(err, ErrClosed) {
		t.Errorf("a question after quitting returned %v, want ErrClosed", err)
	}
}

func TestURLElicitationOpensOnConfirmation(t *testing.T) {
	t.Parallel()
	opened := make(chan string, 1)
	h := start(t, &fakeHost{}, Options{OpenURL: func(u string) error { opened <- u; return nil }})
	u := h.ui

	done := make(chan ask.ElicitReply, 1)
	go func() {
		r, _ := u.Elicit(context.Background(), ask.Elicitation{Server: "pay", Mode: "url", Message: "Confirm the payment",
			URL: "https://pay.example/confirm?id=7", ID: "e1"})
		done <- r
	}()
	h.waitFor("pay asks you to open a URL", "https://pay.example/confirm?id=7", "host: pay.example", "Open in browser")
	select {
	case <-opened:
		t.Fatal("the URL was opened before the person confirmed")
	default:
	}
	h.press("enter")
	if r := recv(t, done, "reply"); r.Action != ask.Accept {
		t.Errorf("reply = %+v, want accept", r)
	}
	if got := recv(t, opened, "URL opened after confirmation"); got != "https://pay.example/confirm?id=7" {
		t.Errorf("opened %q", got)
	}
	h.waitFor("opened https://pay.example/confirm?id=7")
}

func TestSamplingApproval(t *testing.T) {
	t.Parallel()
	h := start(t, &fakeHost{})
	h.waitFor("/help")
	done := make(chan bool, 1)
	go func() {
		ok, _ := h.ui.ApproveSampling(context.Background(), ask.Sampling{Server: "everything", Messages: []string{"Summarise this page"}, MaxTokens: 100})
		done <- ok
	}()
	h.waitFor("everything wants to use your model", "› Summarise this page", "max tokens: 100", "Allow this sampling request?")
	h.press("y")
	if ok := recv(t, done, "sampling reply"); !ok {
		t.Error("sampling was not allowed after pressing y")
	}
}

func TestEscCancelsCall(t *testing.T) {
	t.Parallel()
	b := &fakeHost{
		tools: []tool.Entry{entry("everything", "slow", "Sleeps", `{"type":"object"}`, nil)},
		call: func(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
			tool.ReportProgress(ctx, tool.Progress{Progress: 3, Total: 10, Message: "sleeping"})
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}
	h := start(t, b)
	h.enterLine("/call mcp__everything__slow")
	h.waitFor("mcp__everything__slow", "running", "30%", "sleeping")
	h.press("esc")
	h.waitFor("canceled")
	h.waitGone("working")
}

func TestPasteIsOneMessage(t *testing.T) {
	t.Parallel()
	b := &fakeHost{}
	h := start(t, b)
	h.waitFor("/help")
	h.tm.Send(tea.PasteMsg{Content: "first line\nsecond line"})
	h.waitFor("› first line", "second line")
	h.press("enter")
	h.waitFor("\n  ok") // the answer ("ok" alone would match "tokens")
	if !b.waitDid("send first line\nsecond line") {
		t.Errorf("the model got %q", b.sent())
	}
}

// TestScreenFitsTheTerminal draws each view at 80×24 (and after a resize
// to 60×20) and checks that no line is wider than the terminal and the
// screen has exactly its height.
func TestScreenFitsTheTerminal(t *testing.T) {
	t.Parallel()
	b := &fakeHost{
		servers: []servers.Status{
			{Name: "a-server-with-a-rather-long-name", Transport: "stdio", State: servers.StateFailed,
				Error: strings.Repeat("a long error message ", 10), StderrTail: []string{strings.Repeat("x", 200)}},
			{Name: "web", Transport: "http", State: servers.StateConnected, Tools: 1},
		},
		tools: []tool.Entry{entry("web", "fetch_everything_with_a_long_name", strings.Repeat("describes ", 30),
			`{"type":"object","properties":{"url":{"type":"string","format":"uri","description":"`+strings.Repeat("d ", 60)+`"}}}`, nil)},
	}
	m := newTestModel(t, b, Options{})
	check := func(what string, w, h int) {
		t.Helper()
		m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		screen := m.render()
		lines := strings.Split(screen, "\n")
		if len(lines) != h {
			t.Errorf("%s at %dx%d: %d lines", what, w, h, len(lines))
		}
		for i, l := range lines {
			if lw := lipgloss.Width(l); lw > w {
				t.Errorf("%s at %dx%d: line %d is %d wide: %q", what, w, h, i, lw, ansi.Strip(l))
			}
		}
	}
	key := func(k string) { m.Update(keyMsg(k)) }
	typeLine := func(s string) {
		for _, r := range s {
			m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
		key("enter")
	}
	m.chatEvent(agent.TextDelta{Text: "# Title\n\n" + strings.Repeat("markdown words ", 40) + "\n\n```go\nfunc main() { println(\"" + strings.Repeat("x", 120) + "\") }\n```"})
	m.chatEvent(agent.ToolCallStarted{ID: "1", Name: "mcp__web__fetch_everything_with_a_long_name", Args: json.RawMessage(`{"url":"` + strings.Repeat("u", 200) + `"}`)})
	m.chatEvent(agent.ToolProgress{ID: "1", Progress: tool.Progress{Progress: 5, Total: 10, Message: strings.Repeat("m", 100)}})
	check("chat with a running tool", 80, 24)
	m.chatEvent(agent.ToolCallFinished{ID: "1", Result: tool.TextResult(strings.Repeat("result ", 50) + "\n" + strings.Repeat("line\n", 30))})
	m.chatEvent(agent.TurnFinished{})
	check("chat", 80, 24)
	check("chat", 60, 20)
	typeLine("/mcp")
	check("/mcp", 80, 24)
	check("/mcp", 60, 20)
	key("esc")
	typeLine("/mcp tools")
	check("/mcp tools", 80, 24)
	key("enter")
	check("tool details", 80, 24)
	key("c")
	check("/call form", 80, 24)
	check("/call form", 60, 20)
}

func TestLightTerminal(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, &fakeHost{}, Options{})
	m.chatEvent(agent.TextDelta{Text: "**bold** text"})
	m.chatEvent(agent.TurnFinished{})
	dark := m.render()
	m.Update(tea.BackgroundColorMsg{Color: color.White})
	if m.st.dark {
		t.Fatal("a white background was not taken as light")
	}
	light := m.render()
	if light == dark {
		t.Error("the screen looks the same on a light background")
	}
	if ansi.Strip(light) != ansi.Strip(dark) {
		t.Errorf("the text changed with the theme:\n%s\n---\n%s", ansi.Strip(dark), ansi.Strip(light))
	}
}

// An image a tool returns to the model shows as a placeholder naming the
// file it was saved to, and the file holds the tool's bytes.
func TestImageResultPlaceholder(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n" + strings.Repeat("x", 2040))
	b := &fakeHost{
		tools: []tool.Entry{entry("everything", "get-tiny-image", "Returns a tiny image", `{"type":"object"}`, &sdk.ToolAnnotations{ReadOnlyHint: true})},
		call: func(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
			return &tool.Result{Content: []sdk.Content{
				&sdk.TextContent{Text: "Here's the image:"}, &sdk.ImageContent{Data: png, MIMEType: "image/png"}}}, nil
		},
		replies: []llmtest.Reply{
			{Calls: []llmtest.Call{{ID: "i", Name: "mcp__everything__get-tiny-image", Args: "{}"}}},
			{Text: []string{"done"}},
		},
	}
	dir := t.TempDir()
	h := start(t, b, Options{ImageDir: dir})
	h.enterLine("show me")
	s := h.waitFor("Here's the image:", "[image image/png, 2.0 KB, saved to "+dir)
	files, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	if len(files) != 1 {
		t.Fatalf("saved files = %v, want one .png\n%s", files, s)
	}
	if got, _ := os.ReadFile(files[0]); !bytes.Equal(got, png) {
		t.Error("the saved image differs from the tool's")
	}
}

func TestHistorySurvivesRestart(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "state", "history.jsonl")
	h := start(t, &fakeHost{}, Options{HistoryFile: file})
	h.enterLine("/help")
	h.tm.Send(tea.PasteMsg{Content: "two\nlines"})
	h.press("enter")
	h.waitFor("› two")
	_ = h.tm.Quit()

	h2 := start(t, &fakeHost{}, Options{HistoryFile: file})
	h2.waitFor("/help")
	h2.press("up")
	h2.waitFor("› two", "lines")
	h2.press("up", "up") // the first moves within the two lines
	h2.waitFor("› /help")
}

func TestLoginFinishedIsAnnounced(t *testing.T) {
	t.Parallel()
	b := &fakeHost{servers: []servers.Status{{Name: "github", Transport: "http", State: servers.StateNeedsAuth}}}
	h := start(t, b)
	h.waitFor("0/1 servers")
	b.mu.Lock()
	b.servers = []servers.Status{{Name: "github", Transport: "http", State: servers.StateConnected, Tools: 40}}
	b.mu.Unlock()
	b.opts.OnEvent(servers.StateChanged{Status: b.servers[0]}) // the host tells the App, which tells the UI
	h.waitFor("github is authorized and connected (40 tools)", "1/1 servers")

	// Losing the login mid-session says how to log in again, once.
	b.mu.Lock()
	b.servers = []servers.Status{{Name: "github", Transport: "http", State: servers.StateNeedsAuth, Error: "the refresh token was revoked"}}
	b.mu.Unlock()
	b.opts.OnEvent(servers.StateChanged{Status: b.servers[0]})
	s := h.waitFor("github needs a new login: the refresh token was revoked — open /mcp, select it and press l", "0/1 servers")
	if n := strings.Count(s, "github needs login"); n != 1 { // at startup only
		t.Errorf("the startup login notice shows %d times, want once, after the welcome:\n%s", n, s)
	}
	if strings.Index(s, "github needs login") < strings.Index(s, "otter — type a message") {
		t.Errorf("the login notice comes before the welcome:\n%s", s)
	}
}

func TestPromptWithArguments(t *testing.T) {
	t.Parallel()
	b := &fakeHost{prompts: []servers.Prompt{{Server: "everything", Name: "args-prompt", Description: "A prompt with arguments",
		Arguments: []*sdk.PromptArgument{{Name: "topic", Description: "What about", Required: true}, {Name: "style"}}}}}
	h := start(t, b)
	h.enterLine("/mcp__everything__args-prompt")
	h.waitFor("A prompt with arguments", "topic *", "What about", "style")
	h.typeText("cats")
	h.press("enter", "enter")
	// The prompt is sent whole: the transcript shows its command and
	// arguments, then its text, which is what the model gets.
	h.waitFor("› /mcp__everything__args-prompt topic=cats", "\n  prompt text for cats")
	if !b.did("prompt everything args-prompt map[topic:cats]") {
		t.Errorf("actions = %q", b.actions)
	}
	if !b.waitDid("send prompt text for cats") {
		t.Errorf("the model got %q", b.sent())
	}
	h.enterLine("/mcp__everything__args-prompt topic=dogs style=short")
	h.waitFor("› /mcp__everything__args-prompt topic=dogs style=short", "\n  prompt text for dogs")
	if !b.did("prompt everything args-prompt map[style:short topic:dogs]") {
		t.Errorf("actions = %q", b.actions)
	}
	if !b.waitDid("send prompt text for dogs") {
		t.Errorf("the model got %q", b.sent())
	}
}

// TestOnlyVisibleMessagesRender checks the windowing: a long transcript
// renders only what reaches the screen, and scrolling renders more.
func TestOnlyVisibleMessagesRender(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, &fakeHost{}, Options{})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	for i := range 500 {
		m.tr.add(&userItem{text: fmt.Sprintf("message %03d", i)})
	}
	screen := ansi.Strip(m.render())
	if !strings.Contains(screen, "message 499") || strings.Contains(screen, "message 400") {
		t.Fatalf("the newest messages are not at the bottom:\n%s", screen)
	}
	rendered := 0
	for _, it := range m.tr.items {
		if it.cache().lines != nil {
			rendered++
		}
	}
	if rendered > 30 {
		t.Errorf("%d of %d messages were rendered for a 24-line screen", rendered, len(m.tr.items))
	}
	for range 10 {
		m.Update(keyMsg("pgup"))
	}
	screen = ansi.Strip(m.render())
	if strings.Contains(screen, "message 499") || !strings.Contains(screen, "message 4") {
		t.Errorf("pgup did not scroll back:\n%s", screen)
	}
	for range 1000 {
		m.Update(keyMsg("pgup"))
	}
	if screen = ansi.Strip(m.render()); !strings.Contains(screen, "otter") || !strings.Contains(screen, "message 000") {
		t.Errorf("scrolling up stops at the top:\n%s", screen)
	}
}

// A long line of a tool result is cut with "…" in the preview; expanded
// (ctrl+o), nothing is cut: the line wraps and every word shows.
func TestExpandedResultWrapsLongLines(t *testing.T) {
	t.Parallel()
	words := make([]string, 60)
	for i := range words {
		words[i] = fmt.Sprintf("w%02d", i)
	}
	long := strings.Join(words, " ") // ~240 columns on a 100-column terminal
	b := &fakeHost{
		tools: []tool.Entry{entry("docs", "read", "Reads a document", `{"type":"object"}`, &sdk.ToolAnnotations{ReadOnlyHint: true})},
		call: func(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
			return tool.TextResult(long), nil
		},
		replies: []llmtest.Reply{
			{Calls: []llmtest.Call{{ID: "l", Name: "mcp__docs__read", Args: "{}"}}},
			{Text: []string{"read it"}},
		},
	}
	h := start(t, b)
	h.enterLine("read")
	s := h.waitFor("w00 w01", "read it")
	if strings.Contains(s, "w59") {
		t.Fatalf("the collapsed preview shows the whole long line:\n%s", s)
	}
	h.press("ctrl+o")
	s = h.waitFor("w59")
	for _, w := range words {
		if !strings.Contains(s, w) {
			t.Errorf("expanded result lacks %s:\n%s", w, s)
		}
	}
}

// /call with a short tool name that two servers offer names both; Tab
// completes short names and, pressed again, cycles through the candidates.
func TestCallShortNamesAmbiguityAndTabCycling(t *testing.T) {
	t.Parallel()
	obj := `{"type":"object"}`
	b := &fakeHost{
		call: func(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
			return tool.TextResult("called " + name), nil
		},
	}
	b.tools = []tool.Entry{ // tools of two servers
		entry("alpha", "echo", "Echo from alpha", obj, nil),
		entry("beta", "echo", "Echo from beta", obj, nil),
		entry("beta", "get-sum", "Adds", obj, nil),
	}
	h := start(t, b)
	h.enterLine(`/call echo {}`)
	h.waitFor("echo is ambiguous: 2 servers offer it — use one of mcp__alpha__echo, mcp__beta__echo")

	h.typeText("/call get-") // "get" is get_status's too, otter's built-in
	h.press("tab")
	h.waitFor("› /call get-sum")
	h.press("enter")
	h.waitFor("called mcp__beta__get-sum")

	h.typeText("/call mcp__")
	h.press("tab") // the common prefix, and the list
	h.waitFor("tab again cycles")
	h.press("tab")
	h.waitFor("› /call mcp__alpha__echo", "1/3")
	h.press("tab")
	h.waitFor("› /call mcp__beta__echo", "2/3")
}

// On a narrow terminal /help wraps each description under its column.
func TestHelpWrapsUnderItsColumn(t *testing.T) {
	t.Parallel()
	got := hangingWrap("  /mcp tools [server]  filterable list of tools; enter shows description, input schema, annotations", 60)
	lines := strings.Split(got, "\n")
	if len(lines) < 2 {
		t.Fatalf("not wrapped at 60 columns:\n%s", got)
	}
	col := strings.Index(lines[0], "filterable")
	for _, l := range lines[1:] {
		if ind := len(l) - len(strings.TrimLeft(l, " ")); ind != col {
			t.Errorf("continuation indented %d, want %d (under the description):\n%s", ind, col, got)
		}
		if ansi.StringWidth(l) > 60 {
			t.Errorf("line wider than 60: %q", l)
		}
	}
	if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields("/mcp tools [server] filterable list of tools; enter shows description, input schema, annotations"), " ") {
		t.Errorf("words lost or changed:\n%s", got)
	}
}

// /call shows text content as the text itself, not as an escaped JSON
// string, and the result's other fields as JSON below it.
func TestCallShowsDecodedText(t *testing.T) {
	t.Parallel()
	b := &fakeHost{
		tools: []tool.Entry{entry("docs", "read", "Reads", `{"type":"object"}`, nil)},
		call: func(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
			return &tool.Result{
				Content:           []sdk.Content{&sdk.TextContent{Text: "first line\n\t\"quoted\" second <line> & more"}},
				StructuredContent: map[string]any{"sum": 3},
			}, nil
		},
	}
	h := start(t, b)
	h.enterLine(`/call read {}`)
	s := h.waitFor("⎿ first line", `"quoted" second <line> & more`, "result fields", `"sum": 3`)
	for _, escaped := range []string{`\n`, `\"quoted`, `\u003c`, `"type": "text"`} {
		if strings.Contains(s, escaped) {
			t.Errorf("the result shows %s, the JSON-escaped form:\n%s", escaped, s)
		}
	}
}

// The hint for a first server names the config file otter reads: the
// App's (its Paths follow $XDG_CONFIG_HOME when otter runs), here the
// test's own directory, never ~/.config/otter.
func TestEmptyMCPNamesTheRealConfigFile(t *testing.T) {
	t.Parallel()
	b := &fakeHost{}
	h := start(t, b)
	h.enterLine("/mcp")
	s := h.waitFor("No MCP servers are configured")
	flat := func(s string) string { return strings.Join(strings.Fields(s), "") }
	if want := b.app.Paths.UserConfigFile(); !strings.Contains(flat(s), flat(want)) { // a long path wraps
		t.Errorf("the hint does not name %s:\n%s", want, s)
	}
	if strings.Contains(s, "~/.config/otter") {
		t.Errorf("the hint names ~/.config/otter although otter reads %s:\n%s", b.app.Paths.UserConfigFile(), s)
	}
}

// The same on the screen: /help at 60 columns keeps its two columns.
func TestHelpAtNarrowWidth(t *testing.T) {
	t.Parallel()
	h := start(t, &fakeHost{})
	h.tm.Send(tea.WindowSizeMsg{Width: 60, Height: 60}) // /help whole on the screen
	h.enterLine("/help")
	s := h.waitFor("filterable list", "forget the conversation")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		col := strings.Index(l, "filterable list")
		if col < 0 {
			continue
		}
		next := lines[i+1]
		if ind := len(next) - len(strings.TrimLeft(next, " ")); ind != col || strings.TrimSpace(next) == "" {
			t.Errorf("the description continues at column %d, want %d:\n%s\n%s", ind, col, l, next)
		}
		return
	}
	t.Fatalf("no /help line for /mcp tools:\n%s", s)
}

// Servers that need a login at startup are told about in one notice once
// startup settles, not one prompt each; the login starts from /mcp (l),
// and a declined login is not announced again.
func TestStartupLoginsAreOneNotice(t *testing.T) {
	t.Parallel()
	b := &fakeHost{servers: []servers.Status{
		{Name: "github", Transport: "http", State: servers.StatePending},
		{Name: "linear", Transport: "http", State: servers.StatePending},
		{Name: "fs", Transport: "stdio", State: servers.StateConnected, Tools: 3},
	}}
	h := start(t, b)
	h.waitFor("1/3 servers")
	set := func(i int, st servers.State) {
		b.mu.Lock()
		b.servers[i].State = st
		s := b.servers[i]
		b.mu.Unlock()
		b.opts.OnEvent(servers.StateChanged{Status: s}) // the host tells the App, which tells the UI
	}
	set(0, servers.StateNeedsAuth) // linear is still pending: wait for it
	// The tools are otter's built-ins: fs's are not the test's.
	s := h.waitFor(fmt.Sprintf("1/3 servers · %d tools · 1 need login", len(b.app.ToolEntries())))
	if strings.Contains(s, "github") {
		t.Errorf("a login notice before startup settled:\n%s", s)
	}
	set(1, servers.StateNeedsAuth)
	s = h.waitFor("2 servers need login (github, linear) — open /mcp and press l")
	if strings.Contains(s, "needs authorization") {
		t.Errorf("startup put a login prompt up:\n%s", s)
	}
	h.enterLine("/mcp")
	h.waitFor("MCP servers")
	h.press("l")
	if !b.waitDid("login github") {
		t.Fatalf("l in /mcp did not start a login: %v", b.actions)
	}
	h.press("esc")
	set(0, servers.StatePending) // the login ran and was put off: back to needs-auth
	h.waitFor("· 1 need login")
	set(0, servers.StateNeedsAuth)
	h.waitFor("· 2 need login")
	h.tm.Send(tea.WindowSizeMsg{Width: 100, Height: 80}) // the notice and /help on one screen
	h.enterLine("/help")
	s = h.waitFor("forget the conversation", "Commands")
	if n := strings.Count(s, "servers need login") + strings.Count(s, "needs login"); n != 1 {
		t.Errorf("the login notice shows %d times, want once:\n%s", n, s)
	}
}

// An answer the model cut at its output limit says so, and how to get the rest.
func TestTruncatedAnswerSaysSo(t *testing.T) {
	t.Parallel()
	b := &fakeHost{replies: []llmtest.Reply{{Text: []string{"Otters are mustel"}, AtLimit: true}}}
	h := start(t, b)
	h.waitFor("/help")
	h.enterLine("otters?")
	h.waitFor("Otters are mustel", "output limit", "[agent] max_tokens")
}

// A fast typist (or a paste) fixes a field, presses Enter and types on:
// every key after the Enter lands in the next field, none in the one left.
func TestElicitationKeysAfterEnterGoToTheNextField(t *testing.T) {
	t.Parallel()
	h := start(t, &fakeHost{})
	h.waitFor("/help")
	done := make(chan ask.ElicitReply, 1)
	go func() {
		r, _ := h.ui.Elicit(context.Background(), ask.Elicitation{Server: "cal", Message: "When?", Mode: "form",
			Schema: json.RawMessage(`{"type":"object","properties":{
				"day":{"type":"string","format":"date"},
				"count":{"type":"integer","minimum":1,"maximum":100}},"required":["day","count"]}`)})
		done <- r
	}()
	h.waitFor("cal asks for input", "day *")
	h.typeText("1815-13-45")
	h.press("enter")
	h.waitFor("day: must be a date (YYYY-MM-DD)")
	// All at once, as a burst of keys arrives from the terminal.
	h.press("backspace", "backspace", "backspace", "backspace", "backspace")
	h.typeText("12-10")
	h.press("enter")
	h.typeText("45")
	h.press("enter", "enter") // to Respond, then Accept
	r := recv(t, done, "the reply")
	want := map[string]any{"day": "1815-12-10", "count": int64(45)}
	if r.Action != ask.Accept || !reflect.DeepEqual(r.Content, want) {
		t.Errorf("reply = %+v, want accept with %v", r, want)
	}
}

// A tool list longer than the screen says which part it shows.
// (The list holds otter's built-ins too, before big's 40 tools.)
func TestMCPToolsSaysWhenMoreThanFits(t *testing.T) {
	t.Parallel()
	b := &fakeHost{}
	for i := range 40 {
		b.tools = append(b.tools, entry("big", fmt.Sprintf("tool%02d", i), "", `{}`, nil))
	}
	h := start(t, b)
	n := len(b.app.ToolEntries())
	h.enterLine("/mcp tools")
	h.waitFor("1–", fmt.Sprintf("of %d shown · ↓ more", n), "mcp__big__tool00")
	for range n - 1 {
		h.press("down")
	}
	s := h.waitFor("mcp__big__tool39", fmt.Sprintf("of %d shown", n))
	if strings.Contains(s, "↓ more") {
		t.Errorf("at the end of the list it still says there is more:\n%s", s)
	}
}

// The form shows the fields in the server's order (required ones first)
// and an enum by its enumNames; the schema is app's orderedSchema, which
// the headless form and `otter mcp tools` are tested on too.
func TestElicitationFormKeepsOrderAndEnumNames(t *testing.T) {
	t.Parallel()
	h := start(t, &fakeHost{})
	h.waitFor("/help")
	done := make(chan ask.ElicitReply, 1)
	go func() {
		r, _ := h.ui.Elicit(context.Background(), ask.Elicitation{Server: "geo", Message: "Where?", Mode: "form",
			Schema: json.RawMessage(`{"type":"object","properties":{
				"zone":{"type":"string","enum":["eu","us"],"enumNames":["Europe","United States"]},
				"name":{"type":"string"},
				"count":{"type":"integer","default":2}},"required":["count"]}`)})
		done <- r
	}()
	h.waitFor("geo asks for input", "count *", "zone", "Europe", "United States", "name")
	s := h.screen()
	if c, z, n := strings.Index(s, "count *"), strings.Index(s, "zone"), strings.LastIndex(s, "name"); c > z || z > n {
		t.Errorf("fields out of order (want count, zone, name):\n%s", s)
	}
	h.press("ctrl+d")
	if r := recv(t, done, "reply after ctrl+d"); r.Action != ask.Decline {
		t.Errorf("reply = %+v, want decline", r)
	}
}

// A resource link and an embedded resource read as `otter mcp call` prints
// them (render.Terminal).
func TestCallShowsResourcesAsTheCLIDoes(t *testing.T) {
	t.Parallel()
	b := &fakeHost{
		tools: []tool.Entry{entry("docs", "read", "Reads", `{"type":"object"}`, nil)},
		call: func(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
			return &tool.Result{Content: []sdk.Content{
				&sdk.ResourceLink{URI: "file:///r.txt", Name: "r", MIMEType: "text/plain"},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://t", MIMEType: "text/plain", Text: "inside"}},
			}}, nil
		},
	}
	h := start(t, b)
	h.enterLine(`/call read {}`)
	h.waitFor("[resource link: r, file:///r.txt, text/plain]", "[resource: mem://t, text/plain]", "inside")
}

// /help names every command Tab completes, so none is found only by
// accident.
func TestHelpNamesEveryCommand(t *testing.T) {
	t.Parallel()
	for _, c := range slashCommands {
		if !regexp.MustCompile(regexp.QuoteMeta(c) + `\b`).MatchString(helpText) {
			t.Errorf("/help does not mention %s", c)
		}
	}
}

// A tool result's preview counts what it leaves out in the singular too:
// "… +1 line", never "… +1 lines".
func TestPreviewCountsHiddenLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lines int
		want  string
	}{{previewLines + 1, "… +1 line (ctrl+o expands)"}, {previewLines + 3, "… +3 lines (ctrl+o expands)"}} {
		var body []string
		for i := range tc.lines {
			body = append(body, fmt.Sprint("row ", i))
		}
		b := &fakeHost{
			tools: []tool.Entry{entry("fs", "read", "Reads a file", `{"type":"object"}`, &sdk.ToolAnnotations{ReadOnlyHint: true})},
			call: func(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
				return tool.TextResult(strings.Join(body, "\n")), nil
			},
			replies: []llmtest.Reply{
				{Calls: []llmtest.Call{{ID: "1", Name: "mcp__fs__read", Args: "{}"}}},
				{Text: []string{"read it"}},
			},
		}
		h := start(t, b)
		h.enterLine("read")
		h.waitFor("read it", tc.want)
	}
}

// The input grows with the lines a long message wraps onto (up to
// maxInputLines), and a new line after a wrapped one takes what is typed
// next where the cursor is: before, the input stayed one row high and
// the cursor jumped back to the start of the message.
func TestInputWrapsLongLines(t *testing.T) {
	t.Parallel()
	b := &fakeHost{}
	h := start(t, b)
	h.waitFor("/help")
	h.tm.Send(tea.WindowSizeMsg{Width: 80, Height: 24})
	long := "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp qqqq rrrr"
	h.typeText(long)
	s := h.waitFor("rrrr")
	if !strings.Contains(s, "aaaa bbbb") {
		t.Errorf("the start of a wrapped message is hidden:\n%s", s)
	}
	h.press("alt+enter")
	h.typeText("ZZZ")
	s = h.waitFor("ZZZ")
	if strings.Contains(s, "ZZZaaaa") {
		t.Errorf("after a new line the typing went to the start of the message:\n%s", s)
	}
	h.press("enter")
	if !b.waitDid("send " + long + "\nZZZ") {
		t.Errorf("sent %q, want the long line, a new line and ZZZ", b.actions)
	}
}
