package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/appparts"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/toolname"
)

// fakeHost is the fake Part the TUI's tests build a real App on: a
// scripted MCP client manager (servers.Host) whose servers, tools, prompts
// and resources are what the test sets, and which records what the TUI
// asked it to do. The model is an llmtest server playing replies; the
// session database, the configuration and the tool set are otter's own.
// The TUI is a view, and these tests check what it shows and what it asks
// the core to do.
type fakeHost struct {
	mu        sync.Mutex
	provider  Provider // the provider configured: [agent] provider and model; Help set: none
	servers   []servers.Status
	changes   []app.ToolChange // what ToolChanges returns
	tools     []tool.Entry     // MCP tools, each registered under its Info.Server
	prompts   []servers.Prompt
	resources []servers.Resource
	templates []servers.ResourceTemplate
	actions   []string

	// replies are what the model answers, in order; past them, "ok".
	replies []llmtest.Reply
	// listed are the models the provider's API lists.
	listed []string
	config string // more config.toml, appended
	// agentConfig is more of the [agent] table ("tool_search = …\n"),
	// with a provider configured.
	agentConfig string
	// providerConfig is more of the provider's table ([providers.NAME]),
	// e.g. "context_window = 200000\n".
	providerConfig string
	// workDir is the App's working directory (default: a new one).
	workDir string

	call     func(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error)
	reload   func() servers.ReloadDiff
	read     func(ctx context.Context, server, uri string) (*sdk.ReadResourceResult, error)
	complete func(ctx context.Context, server, ref, name, arg, value string, resolved map[string]string) ([]string, error)

	model *llmtest.Server // set by start
	opts  servers.Options // what the App gave NewServers
	app   *app.App
	conv  *app.Conversation
}

var _ servers.Host = (*fakeHost)(nil)

// newServers is the fake's app.Parts.NewServers.
func (f *fakeHost) newServers(_ config.MCP, o servers.Options) servers.Host {
	f.mu.Lock()
	f.opts = o
	f.mu.Unlock()
	f.registerTools()
	return f
}

// registerTools hands the tool set the test's MCP tools, by server.
func (f *fakeHost) registerTools() {
	f.mu.Lock()
	set := f.opts.Tools
	byServer := map[string][]tool.Tool{}
	var order []string
	for _, e := range f.tools {
		srv := e.Info.Server
		if _, ok := byServer[srv]; !ok {
			order = append(order, srv)
		}
		// A pointer: the tool set compares tools with ==, and an Info holds
		// slices.
		byServer[srv] = append(byServer[srv], &fakeTool{f: f, info: e.Info})
	}
	f.mu.Unlock()
	if set == nil {
		return
	}
	for _, srv := range order {
		set.SetServerTools(srv, byServer[srv])
	}
}

// fakeTool is one of the test's MCP tools: its call is recorded and
// answered by fakeHost.call ("called NAME" by default).
type fakeTool struct {
	f    *fakeHost
	info tool.Info
}

func (t *fakeTool) Info() tool.Info { return t.info }

func (t *fakeTool) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	name := toolname.Qualified(t.info.Server, t.info.Name)
	t.f.record("call " + name + " " + string(args))
	if t.f.call != nil {
		return t.f.call(ctx, name, args)
	}
	return &tool.Result{Content: []sdk.Content{&sdk.TextContent{Text: "called " + name}}}, nil
}

func (f *fakeHost) record(s string) {
	f.mu.Lock()
	f.actions = append(f.actions, s)
	f.mu.Unlock()
}

// waitDid waits until the core was asked to do s (its calls come from
// the UI's commands, off the test's goroutine), and reports whether it was.
func (f *fakeHost) waitDid(s string) bool {
	deadline := time.Now().Add(20 * time.Second)
	for !f.did(s) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// did reports whether the core was asked to do s: an action of the
// fake's ("reconnect docs", "call docs__search {}"), or "send TEXT", a user
// message the model received.
func (f *fakeHost) did(s string) bool {
	if text, ok := strings.CutPrefix(s, "send "); ok && f.model != nil {
		return slices.Contains(f.sent(), text)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Contains(f.actions, s)
}

func (f *fakeHost) Start(context.Context) {}

// WaitSettled waits until no server is pending (the test changes them).
func (f *fakeHost) WaitSettled(ctx context.Context) error {
	for {
		f.mu.Lock()
		pending := slices.ContainsFunc(f.servers, func(s servers.Status) bool { return s.State == servers.StatePending })
		f.mu.Unlock()
		if !pending {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (f *fakeHost) Statuses() []servers.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.servers)
}

func (f *fakeHost) Status(name string) (servers.Status, bool) {
	for _, s := range f.Statuses() {
		if s.Name == name {
			return s, true
		}
	}
	return servers.Status{}, false
}

func (f *fakeHost) Session(string) (*sdk.ClientSession, bool) { return nil, false }

func (f *fakeHost) Reload(context.Context, config.MCP) servers.ReloadDiff {
	f.record("reload")
	if f.reload != nil {
		return f.reload()
	}
	return servers.ReloadDiff{}
}

func (f *fakeHost) Reconnect(_ context.Context, s string) error {
	f.record("reconnect " + s)
	return nil
}

// Wake records the wake and connects an idle server, as the manager
// starts one.
func (f *fakeHost) Wake(_ context.Context, s string) error {
	f.record("wake " + s)
	f.mu.Lock()
	for i := range f.servers {
		if f.servers[i].Name == s && f.servers[i].State == servers.StateIdle {
			f.servers[i].State = servers.StateConnected
		}
	}
	f.mu.Unlock()
	return nil
}

func (f *fakeHost) Login(_ context.Context, s string) error {
	f.record("login " + s)
	return nil
}

func (f *fakeHost) SetEnabled(_ context.Context, s string, on bool) error {
	f.record(fmt.Sprintf("enable %s %v", s, on))
	return nil
}

func (f *fakeHost) Instructions() map[string]string {
	out := map[string]string{}
	for _, s := range f.Statuses() {
		if s.Instructions != "" {
			out[s.Name] = s.Instructions
		}
	}
	return out
}

func (f *fakeHost) Prompts() []servers.Prompt {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.prompts)
}

func (f *fakeHost) GetPrompt(_ context.Context, server, name string, args map[string]string) (*sdk.GetPromptResult, error) {
	f.record(fmt.Sprintf("prompt %s %s %v", server, name, args))
	return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "prompt text for " + args["topic"]}}}}, nil
}

func (f *fakeHost) Resources() []servers.Resource {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.resources)
}

func (f *fakeHost) ResourceTemplates() []servers.ResourceTemplate {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.templates)
}

func (f *fakeHost) HasResources() bool { return len(f.Resources())+len(f.ResourceTemplates()) > 0 }

func (f *fakeHost) ReadResource(ctx context.Context, server, uri string) (*sdk.ReadResourceResult, error) {
	f.record("read " + server + " " + uri)
	if f.read != nil {
		return f.read(ctx, server, uri)
	}
	return nil, fmt.Errorf("%s has no resource %s", server, uri)
}

func (f *fakeHost) Complete(ctx context.Context, server, ref, name, arg, value string, resolved map[string]string) ([]string, error) {
	if f.complete != nil {
		return f.complete(ctx, server, ref, name, arg, value, resolved)
	}
	return nil, nil
}

func (f *fakeHost) ToolChanges(s string) ([]app.ToolChange, error) {
	f.record("changes " + s)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changes, nil
}

func (f *fakeHost) ApproveTools(_ context.Context, s string, _ []string) ([]app.ToolChange, error) {
	f.record("approve " + s)
	return nil, nil
}

func (f *fakeHost) CanSubscribe(string) bool                          { return false }
func (f *fakeHost) Subscribe(context.Context, string, string) error   { return nil }
func (f *fakeHost) Unsubscribe(context.Context, string, string) error { return nil }
func (f *fakeHost) Close() error                                      { return nil }

// sent are the user messages the model was sent, in order (the last
// user message of each request that brought a new one).
func (f *fakeHost) sent() []string {
	var out []string
	for _, r := range f.model.Requests() {
		for i := len(r.Messages) - 1; i >= 0; i-- {
			if r.Messages[i].Role == "user" {
				if t := r.Messages[i].Text; t != "" && (len(out) == 0 || out[len(out)-1] != t) {
					out = append(out, t)
				}
				break
			}
		}
	}
	return out
}

// build makes the App and the Conversation the TUI u shows, over f: the
// model an llmtest server, the configuration f's provider and config.
func (f *fakeHost) build(t testing.TB, u *UI) *app.Conversation {
	t.Helper()
	if f.provider == (Provider{}) {
		f.provider = Provider{Name: "fake", Model: "m1"}
	}
	kind := llmtest.OpenAI
	if f.provider.Name == "anthropic" {
		kind = llmtest.Anthropic
	}
	f.model = llmtest.New(t, kind, f.replies...)
	f.model.Models = f.listed
	f.model.Respond = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"ok"}} }
	cfg := ""
	if f.provider.Help == "" {
		cfg = fmt.Sprintf("[agent]\nprovider = %q\nmodel = %q\n%s[providers.%s]\ntype = %q\nbase_url = %q\napi_key = \"k\"\n%s",
			f.provider.Name, f.provider.Model, f.agentConfig, f.provider.Name, string(kind), f.model.URL, f.providerConfig)
	}
	// A short directory, as ~/.config/otter is: the panels that name a
	// config file keep their size (t.TempDir's names are long).
	dir, err := os.MkdirTemp("", "o")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	paths := config.Paths{ConfigDir: filepath.Join(dir, "config"), DataDir: filepath.Join(dir, "data"),
		StateDir: filepath.Join(dir, "state"), CacheDir: filepath.Join(dir, "cache")}
	if err := os.MkdirAll(paths.ConfigDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(paths.UserConfigFile(), []byte(cfg+f.config), 0o600); err != nil {
		t.Fatal(err)
	}
	work := f.workDir
	if work == "" {
		work = t.TempDir()
	}
	parts := appparts.Default()
	parts.NewServers = f.newServers
	ctx := context.Background()
	a, err := app.New(ctx, AppOptions(app.Options{Parts: parts, Paths: paths, WorkDir: work, Logger: slog.New(slog.DiscardHandler),
		LookupEnv: func(string) (string, bool) { return "", false }}, u))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	conv, err := NewConversation(ctx, u, a, app.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.app, f.conv = a, conv
	return conv
}

// newTestModel is a model of a new UI (with opts) over f, not running:
// for tests of what it draws.
func newTestModel(t testing.TB, f *fakeHost, opts Options) *model {
	t.Helper()
	u := New(opts)
	return newModel(u, f.build(t, u))
}

// --- harness ---

type harness struct {
	t  *testing.T
	ui *UI
	tm *teatest.TestModel
	b  *fakeHost
	// changed has a value once the model updated since it was last read
	// (see model.updated): waits look at the screen again then, not on a
	// clock — drawing the screen every few milliseconds took a core.
	changed chan struct{}
}

// start runs the TUI over a real App on b, the fake Part.
func start(t *testing.T, b *fakeHost, opts ...Options) *harness {
	t.Helper()
	return startModel(t, b, nil, opts...)
}

// fakeClock is a clock that moves only when the test moves it.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// startModel is start with setup run on the model before it starts.
func startModel(t *testing.T, b *fakeHost, setup func(*model), opts ...Options) *harness {
	t.Helper()
	o := Options{ImageDir: t.TempDir()}
	if len(opts) > 0 {
		o = opts[0]
	}
	u := New(o)
	m := newModel(u, b.build(t, u))
	if setup != nil {
		setup(m)
	}
	return runHarness(t, u, m, b)
}

// runHarness runs m (a model of u) in teatest, 100×32, and returns the
// harness that drives it; the program ends with the test.
func runHarness(t *testing.T, u *UI, m *model, b *fakeHost, opts ...teatest.TestOption) *harness {
	t.Helper()
	changed := make(chan struct{}, 1)
	m.updated = func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	tm := teatest.NewTestModel(t, m, append([]teatest.TestOption{teatest.WithInitialTermSize(100, 32)}, opts...)...)
	u.attach(tm)
	t.Cleanup(func() {
		// A turn still running (a reply held open) ends with the model's
		// context, so that the fake model's server can close.
		m.stop()
		_ = tm.Quit()
		tm.WaitFinished(t, teatest.WithFinalTimeout(20*time.Second))
		u.finish()
	})
	return &harness{t: t, ui: u, tm: tm, b: b, changed: changed}
}

// screen returns what the terminal shows now, without colours.
func (h *harness) screen() string {
	h.t.Helper()
	ch := make(chan string, 1)
	h.tm.Send(snapshotMsg{ch})
	select {
	case s := <-ch:
		return s
	case <-time.After(20 * time.Second):
		h.t.Fatal("the UI did not answer a snapshot request")
		return ""
	}
}

// nextChange waits until the model has updated since the last look at the
// screen, or a while (a clock-driven change, such as "3s ago", comes with an
// update too; the while is a backstop).
func (h *harness) nextChange() {
	select {
	case <-h.changed:
	case <-time.After(250 * time.Millisecond):
	}
}

// waitFor waits until the screen contains every string in want.
func (h *harness) waitFor(want ...string) string {
	h.t.Helper()
	return h.waitShows(strings.Contains, want...)
}

// waitWords waits until the screen shows every string in want, wherever
// its lines wrap: white space is left out of the comparison.
func (h *harness) waitWords(want ...string) string {
	h.t.Helper()
	flat := func(s string) string { return strings.Join(strings.Fields(s), "") }
	return h.waitShows(func(s, w string) bool { return strings.Contains(flat(s), flat(w)) }, want...)
}

// waitShows waits until shows(screen, w) holds for every w in want.
func (h *harness) waitShows(shows func(screen, w string) bool, want ...string) string {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		s = h.screen()
		ok := true
		for _, w := range want {
			if !shows(s, w) {
				ok = false
				break
			}
		}
		if ok {
			return s
		}
		h.nextChange()
	}
	h.t.Fatalf("the screen never showed %q; last screen:\n%s", want, s)
	return ""
}

// waitGone waits until the screen no longer shows s.
func (h *harness) waitGone(gone string) string {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		if s = h.screen(); !strings.Contains(s, gone) {
			return s
		}
		h.nextChange()
	}
	h.t.Fatalf("the screen still shows %q:\n%s", gone, s)
	return ""
}

func (h *harness) typeText(s string) { h.tm.Type(s) }

func (h *harness) press(keys ...string) {
	for _, k := range keys {
		h.tm.Send(keyMsg(k))
	}
}

func (h *harness) enterLine(s string) {
	h.typeText(s)
	h.press("enter")
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "ctrl+d":
		return tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "ctrl+o":
		return tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "alt+enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt}
	}
	r := []rune(k)
	if len(r) == 6 && strings.HasPrefix(k, "ctrl+") {
		return tea.KeyPressMsg{Code: r[5], Mod: tea.ModCtrl}
	}
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

func entry(server, name, desc, schema string, ann *sdk.ToolAnnotations) tool.Entry {
	qn := name
	if server != "" {
		qn = toolname.Qualified(server, name)
	}
	return tool.Entry{Name: qn, Info: tool.Info{Name: name, Server: server, Description: desc,
		InputSchema: json.RawMessage(schema), Annotations: ann}}
}

// recv waits for a value on ch (a liveness bound, not a speed check).
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: nothing after 20s", what)
	}
	var zero T
	return zero
}
