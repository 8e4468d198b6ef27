//go:build seamwip

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
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
)

func TestChatTurnWithToolCall(t *testing.T) {
	b := &fakeHost{
		send: func(ctx context.Context, text string, emit func(agent.Event)) error {
			emit(agent.TextDelta{Text: "Let me check **the "})
			emit(agent.TextDelta{Text: "forecast**."})
			emit(agent.ToolCallStarted{ID: "t1", Name: "mcp__wx__forecast", Args: json.RawMessage(`{"city":"Oslo"}`)})
			emit(agent.ToolProgress{ID: "t1", Progress: tool.Progress{Progress: 1, Total: 2, Message: "fetching"}})
			emit(agent.ToolCallFinished{ID: "t1", Name: "mcp__wx__forecast", Result: tool.TextResult("Sunny, 21°C\nwind 3 m/s"), Elapsed: 1200 * time.Millisecond})
			emit(agent.TextDelta{Text: "It is sunny in Oslo."})
			emit(agent.Usage{InputTokens: 1200, OutputTokens: 340})
			emit(agent.TurnFinished{Text: "It is sunny in Oslo."})
			return nil
		},
	}
	h := start(t, b)
	h.waitFor("/help")
	h.enterLine("weather in Oslo?")
	s := h.waitFor("› weather in Oslo?", "Let me check the forecast.", "mcp__wx__forecast", `{"city":"Oslo"}`,
		"✓", "1.2s", "Sunny, 21°C", "It is sunny in Oslo.", "↑1.2k ↓340 tokens")
	h.waitGone("working") // the turn ends
	if !b.did("send weather in Oslo?") {
		t.Errorf("the message did not reach the agent; actions: %v", b.actions)
	}
	if strings.Count(s, "It is sunny in Oslo.") != 1 {
		t.Errorf("the streamed final text shows more than once:\n%s", s)
	}
}

func TestMCPTableFailedAndConnected(t *testing.T) {
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
	h.waitFor("1/2 servers · 3 tools")
}

func TestMCPToolsFilter(t *testing.T) {
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true}
	b := &fakeHost{tools: []tool.Entry{
		entry("", "scrape_page", "Fetch a page and extract data", `{"type":"object"}`, ro),
		entry("everything", "echo", "Echoes back the input", `{"type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"]}`, ro),
		entry("everything", "add", "Adds two numbers", `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`, nil),
	}}
	h := start(t, b)
	h.enterLine("/mcp tools")
	h.waitFor("Tools", "3 shown", "filter: type to filter tool names", "scrape_page", "mcp__everything__echo", "mcp__everything__add")
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

	// A reload that changes only [agent] or [providers] says so.
	b.reload = func() servers.ReloadDiff {
		b.mu.Lock()
		b.provider = Provider{Name: "local", Model: "qwen3:8b"}
		b.mu.Unlock()
		return servers.ReloadDiff{Unchanged: []string{"alpha", "beta"}}
	}
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

func TestPermissionPromptDenied(t *testing.T) {
	var h *harness
	b := &fakeHost{}
	b.send = func(ctx context.Context, text string, emit func(agent.Event)) error {
		d, err := h.ui.ApproveTool(ctx, ask.Permission{Tool: "mcp__fs__delete_file", Server: "fs",
			Arguments: json.RawMessage(`{"path":"/tmp/x"}`), Destructive: true})
		if err != nil {
			return err
		}
		if d == ask.Deny {
			emit(agent.TurnFinished{Text: "I was not allowed to delete it."})
			return nil
		}
		emit(agent.ToolCallStarted{ID: "1", Name: "mcp__fs__delete_file"})
		emit(agent.ToolCallFinished{ID: "1", Result: tool.TextResult("deleted")})
		emit(agent.TurnFinished{Text: "Deleted."})
		return nil
	}
	h = start(t, b)
	h.enterLine("delete /tmp/x")
	h.waitFor("Allow mcp__fs__delete_file?", "may modify or delete data", `"path": "/tmp/x"`,
		"Allow once", "Allow for this session", "Always allow", "Deny")
	h.press("down", "down", "down", "enter")
	s := h.waitFor("I was not allowed to delete it.")
	if strings.Contains(s, "deleted") && !strings.Contains(s, "not allowed to delete") {
		t.Errorf("the tool ran although it was denied:\n%s", s)
	}
}

func TestNeedsAuthPrompt(t *testing.T) {
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

func TestEscCancelsSlowTool(t *testing.T) {
	sawCancel := make(chan struct{})
	b := &fakeHost{send: func(ctx context.Context, text string, emit func(agent.Event)) error {
		emit(agent.ToolCallStarted{ID: "slow", Name: "mcp__everything__longRunningOperation", Args: json.RawMessage(`{"duration":600}`)})
		emit(agent.ToolProgress{ID: "slow", Progress: tool.Progress{Progress: 1, Total: 10, Message: "step 1 of 10"}})
		<-ctx.Done()
		close(sawCancel)
		emit(agent.ToolCallFinished{ID: "slow", Err: ctx.Err()})
		return ctx.Err()
	}}
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

func TestNoProviderAnswersWithHelp(t *testing.T) {
	b := &fakeHost{
		provider: Provider{Help: "No model provider is configured. Add to ~/.config/otter/config.toml:\n[providers.anthropic]\ntype = \"anthropic\"\nor set ANTHROPIC_API_KEY."},
		servers:  []servers.Status{{Name: "alpha", Transport: "stdio", State: servers.StateConnected}},
	}
	h := start(t, b)
	h.waitFor("no provider")
	h.enterLine("hello")
	h.waitFor("› hello", "[providers.anthropic]", "ANTHROPIC_API_KEY")
	if b.did("send hello") {
		t.Error("a message was sent with no provider")
	}
	h.enterLine("/mcp")
	h.waitFor("MCP servers", "alpha")
}

func TestCallFormShowsRawResult(t *testing.T) {
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
	b := &fakeHost{prompts: []servers.Prompt{{Server: "everything", Name: "simple_prompt", Description: "A prompt"}}}
	h := start(t, b)
	h.typeText("/mcp t")
	h.press("tab")
	h.waitFor("› /mcp tools")
	h.press("esc")
	h.enterLine("")
	h.press("enter") // run /mcp tools
	h.waitFor("0 shown")
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
	h.waitFor("› prompt text for")
	if !b.did("prompt everything simple_prompt map[]") {
		t.Errorf("actions = %v", b.actions)
	}
	h.press("up")
	h.waitFor("› /mcp__everything__simple_prompt")
	h.press("up", "up")
	h.waitFor("› /mcp tools")
}

func TestTrustPrompt(t *testing.T) {
	b := &fakeHost{trust: &TrustRequest{Dir: "/work/proj", Servers: []string{"proj: ./run-server --stdio (in sub; env TOKEN)"},
		Settings: []string{"settings config.toml: agent.model, permissions mcp__proj__* = allow", "hook Stop: ./again.sh"}}}
	h := start(t, b)
	h.waitFor("This project is not trusted yet: /work/proj", "Trusting it lets otter run its MCP servers:",
		"./run-server --stdio (in sub; env TOKEN)", "and apply its settings, commands, skills and hooks:",
		"settings config.toml: agent.model, permissions mcp__proj__* = allow", "hook Stop: ./again.sh", "Trust this directory?")
	h.press("y")
	h.waitFor("trusted /work/proj; starting its servers", "config reloaded: added proj")
	if !b.did("trust") {
		t.Errorf("actions = %v", b.actions)
	}
}

// Issue 34 item 16: in a trusted project, the panel lists what changed
// since and asks again; "not now" keeps it off and says the rest runs.
func TestTrustPromptForChanges(t *testing.T) {
	b := &fakeHost{trust: &TrustRequest{Dir: "/work/proj", Changed: true,
		Servers: []string{"added: sh -c touch /tmp/x (new)"}, Settings: []string{"hook Stop: ./added.sh (new)"}}}
	h := start(t, b)
	h.waitFor("configuration changed since you trusted it: /work/proj", "added: sh -c touch /tmp/x (new)",
		"hook Stop: ./added.sh (new)", "Trust these changes?")
	h.press("esc")
	h.waitFor("what changed in /work/proj stays off")
	if b.did("trust") {
		t.Errorf("Esc trusted the changes: %v", b.actions)
	}
}

// Esc on the trust prompt is "not now", and says so.
func TestTrustPromptEsc(t *testing.T) {
	b := &fakeHost{trust: &TrustRequest{Dir: "/work/proj", Servers: []string{"proj: ./run-server --stdio"}}}
	h := start(t, b)
	h.waitFor("Trust this directory?")
	h.press("esc")
	h.waitFor("/work/proj is not trusted", "/trust")
	if b.did("trust") {
		t.Errorf("Esc trusted the project: %v", b.actions)
	}
	// Changed minds: /trust asks again.
	h.enterLine("/trust")
	h.waitFor("Trust this directory?")
	h.press("y")
	h.waitFor("trusted /work/proj", "config reloaded: added proj") // the notice comes before the core's answer
	if !b.did("trust") {
		t.Error("/trust then Trust did not reach the core")
	}
}

func TestCtrlCTwiceQuits(t *testing.T) {
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
	b := &fakeHost{}
	h := start(t, b)
	h.waitFor("/help")
	h.tm.Send(tea.PasteMsg{Content: "first line\nsecond line"})
	h.waitFor("› first line", "second line")
	h.press("enter")
	h.waitFor("ok")
	if !b.did("send first line\nsecond line") {
		t.Errorf("actions = %q", b.actions)
	}
}

// TestScreenFitsTheTerminal draws each view at 80×24 (and after a resize
// to 60×20) and checks that no line is wider than the terminal and the
// screen has exactly its height.
func TestScreenFitsTheTerminal(t *testing.T) {
	b := &fakeHost{
		servers: []servers.Status{
			{Name: "a-server-with-a-rather-long-name", Transport: "stdio", State: servers.StateFailed,
				Error: strings.Repeat("a long error message ", 10), StderrTail: []string{strings.Repeat("x", 200)}},
			{Name: "web", Transport: "http", State: servers.StateConnected, Tools: 1},
		},
		tools: []tool.Entry{entry("web", "fetch_everything_with_a_long_name", strings.Repeat("describes ", 30),
			`{"type":"object","properties":{"url":{"type":"string","format":"uri","description":"`+strings.Repeat("d ", 60)+`"}}}`, nil)},
	}
	m := newModel(New(Options{}), b)
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
	m := newModel(New(Options{}), &fakeHost{})
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

func TestImageResultPlaceholder(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n" + strings.Repeat("x", 2040))
	b := &fakeHost{send: func(ctx context.Context, text string, emit func(agent.Event)) error {
		emit(agent.ToolCallStarted{ID: "i", Name: "mcp__everything__get-tiny-image"})
		emit(agent.ToolCallFinished{ID: "i", Result: &tool.Result{Content: []sdk.Content{
			&sdk.TextContent{Text: "Here's the image:"}, &sdk.ImageContent{Data: png, MIMEType: "image/png"}}}})
		emit(agent.TurnFinished{Text: "done"})
		return nil
	}}
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
	b := &fakeHost{servers: []servers.Status{{Name: "github", Transport: "http", State: servers.StateNeedsAuth}}}
	h := start(t, b)
	h.waitFor("0/1 servers")
	b.mu.Lock()
	b.servers = []servers.Status{{Name: "github", Transport: "http", State: servers.StateConnected, Tools: 40}}
	b.mu.Unlock()
	h.ui.Notify(servers.StateChanged{Status: b.servers[0]})
	h.waitFor("github is authorized and connected (40 tools)", "1/1 servers")

	// Losing the login mid-session says how to log in again, once.
	b.mu.Lock()
	b.servers = []servers.Status{{Name: "github", Transport: "http", State: servers.StateNeedsAuth, Error: "the refresh token was revoked"}}
	b.mu.Unlock()
	h.ui.Notify(servers.StateChanged{Status: b.servers[0]})
	s := h.waitFor("github needs a new login: the refresh token was revoked — open /mcp, select it and press l", "0/1 servers")
	if n := strings.Count(s, "github needs login"); n != 1 { // at startup only
		t.Errorf("the startup login notice shows %d times, want once, after the welcome:\n%s", n, s)
	}
	if strings.Index(s, "github needs login") < strings.Index(s, "otter — type a message") {
		t.Errorf("the login notice comes before the welcome:\n%s", s)
	}
}

func TestPromptWithArguments(t *testing.T) {
	b := &fakeHost{prompts: []servers.Prompt{{Server: "everything", Name: "args-prompt", Description: "A prompt with arguments",
		Arguments: []*sdk.PromptArgument{{Name: "topic", Description: "What about", Required: true}, {Name: "style"}}}}}
	h := start(t, b)
	h.enterLine("/mcp__everything__args-prompt")
	h.waitFor("A prompt with arguments", "topic *", "What about", "style")
	h.typeText("cats")
	h.press("enter", "enter")
	h.waitFor("› prompt text for cats")
	if !b.did("prompt everything args-prompt map[topic:cats]") {
		t.Errorf("actions = %q", b.actions)
	}
	h.enterLine("/mcp__everything__args-prompt topic=dogs style=short")
	h.waitFor("› prompt text for dogs")
	if !b.did("prompt everything args-prompt map[style:short topic:dogs]") {
		t.Errorf("actions = %q", b.actions)
	}
}

// TestOnlyVisibleMessagesRender checks the windowing: a long transcript
// renders only what reaches the screen, and scrolling renders more.
func TestOnlyVisibleMessagesRender(t *testing.T) {
	m := newModel(New(Options{}), &fakeHost{})
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
	words := make([]string, 60)
	for i := range words {
		words[i] = fmt.Sprintf("w%02d", i)
	}
	long := strings.Join(words, " ") // ~240 columns on a 100-column terminal
	b := &fakeHost{send: func(ctx context.Context, text string, emit func(agent.Event)) error {
		emit(agent.ToolCallStarted{ID: "l", Name: "mcp__docs__read"})
		emit(agent.ToolCallFinished{ID: "l", Name: "mcp__docs__read", Result: tool.TextResult(long)})
		emit(agent.TurnFinished{Text: "read it"})
		return nil
	}}
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
	obj := `{"type":"object"}`
	b := &fakeHost{
		tools: []tool.Entry{
			entry("alpha", "echo", "Echo from alpha", obj, nil),
			entry("beta", "echo", "Echo from beta", obj, nil),
			entry("beta", "get-sum", "Adds", obj, nil),
		},
		call: func(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
			return tool.TextResult("called " + name), nil
		},
	}
	h := start(t, b)
	h.enterLine(`/call echo {}`)
	h.waitFor("echo is ambiguous: 2 servers offer it — use one of mcp__alpha__echo, mcp__beta__echo")

	h.typeText("/call get")
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

// The hint for a first server names the config file otter reads, which
// follows $XDG_CONFIG_HOME.
func TestEmptyMCPNamesTheRealConfigFile(t *testing.T) {
	dir, err := os.MkdirTemp("", "xdg") // short: the path must fit one line
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Setenv("XDG_CONFIG_HOME", dir)
	h := start(t, &fakeHost{})
	h.enterLine("/mcp")
	s := h.waitFor("No MCP servers are configured")
	if want := filepath.Join(dir, "otter", "config.toml"); !strings.Contains(s, want) {
		t.Errorf("the hint does not name %s:\n%s", want, s)
	}
	if strings.Contains(s, "~/.config/otter") {
		t.Errorf("the hint names ~/.config/otter although XDG_CONFIG_HOME is set:\n%s", s)
	}
}

// The same on the screen: /help at 60 columns keeps its two columns.
func TestHelpAtNarrowWidth(t *testing.T) {
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
		h.ui.Notify(servers.StateChanged{Status: s})
	}
	set(0, servers.StateNeedsAuth) // linear is still pending: wait for it
	s := h.waitFor("1/3 servers · 0 tools · 1 need login")
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
	deadline := time.Now().Add(20 * time.Second)
	for !b.did("login github") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !b.did("login github") {
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
	b := &fakeHost{
		send: func(ctx context.Context, text string, emit func(agent.Event)) error {
			emit(agent.TextDelta{Text: "Otters are mustel"})
			emit(agent.TurnFinished{Text: "Otters are mustel", Truncated: true})
			return nil
		},
	}
	h := start(t, b)
	h.waitFor("/help")
	h.enterLine("otters?")
	h.waitFor("Otters are mustel", "output limit", "[agent] max_tokens")
}

// A fast typist (or a paste) fixes a field, presses Enter and types on:
// every key after the Enter lands in the next field, none in the one left.
func TestElicitationKeysAfterEnterGoToTheNextField(t *testing.T) {
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
func TestMCPToolsSaysWhenMoreThanFits(t *testing.T) {
	b := &fakeHost{}
	for i := range 40 {
		b.tools = append(b.tools, entry("big", fmt.Sprintf("tool%02d", i), "", `{}`, nil))
	}
	h := start(t, b)
	h.enterLine("/mcp tools")
	h.waitFor("1–", "of 40 shown · ↓ more", "mcp__big__tool00")
	for range 39 {
		h.press("down")
	}
	s := h.waitFor("mcp__big__tool39", "of 40 shown")
	if strings.Contains(s, "↓ more") {
		t.Errorf("at the end of the list it still says there is more:\n%s", s)
	}
}

// The form shows the fields in the server's order (required ones first)
// and an enum by its enumNames; the schema is app's orderedSchema, which
// the headless form and `otter mcp tools` are tested on too.
func TestElicitationFormKeepsOrderAndEnumNames(t *testing.T) {
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
	for _, c := range slashCommands {
		if !regexp.MustCompile(regexp.QuoteMeta(c) + `\b`).MatchString(helpText) {
			t.Errorf("/help does not mention %s", c)
		}
	}
}

// A tool result's preview counts what it leaves out in the singular too:
// "… +1 line", never "… +1 lines".
func TestPreviewCountsHiddenLines(t *testing.T) {
	for _, tc := range []struct {
		lines int
		want  string
	}{{previewLines + 1, "… +1 line (ctrl+o expands)"}, {previewLines + 3, "… +3 lines (ctrl+o expands)"}} {
		var body []string
		for i := range tc.lines {
			body = append(body, fmt.Sprint("row ", i))
		}
		b := &fakeHost{send: func(ctx context.Context, text string, emit func(agent.Event)) error {
			emit(agent.ToolCallStarted{ID: "1", Name: "mcp__fs__read"})
			emit(agent.ToolCallFinished{ID: "1", Name: "mcp__fs__read", Result: tool.TextResult(strings.Join(body, "\n"))})
			emit(agent.TurnFinished{Text: "read it"})
			return nil
		}}
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
