package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/toolname"
)

// fakeBackend is a scripted core: the TUI is a view, and these tests check
// what it shows and what it asks the core to do.
type fakeBackend struct {
	mu       sync.Mutex
	provider Provider
	thinking string // the reasoning level /model set
	servers  []servers.Status
	changes  []app.ToolChange // what ToolChanges returns
	tools    []tool.Entry
	offer    agent.ToolOffer
	prompts  []servers.Prompt
	trust    *TrustRequest
	warnings []string // ConfigWarnings
	actions  []string
	ctxState agent.ContextState
	costs    []agent.ModelUsage

	send   func(ctx context.Context, text string, emit func(agent.Event)) error
	call   func(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error)
	reload func() servers.ReloadDiff
	// compact, when set, is /compact's work (Compact records it first).
	compact func(ctx context.Context, keep string, emit func(agent.Event)) error
}

func (f *fakeBackend) Provider() Provider {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.provider
}

func (f *fakeBackend) Servers() []servers.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]servers.Status(nil), f.servers...)
}

func (f *fakeBackend) Tools() []tool.Entry {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]tool.Entry(nil), f.tools...)
}

func (f *fakeBackend) ToolOffer() agent.ToolOffer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.offer
}

func (f *fakeBackend) Prompts() []servers.Prompt { return f.prompts }

func (f *fakeBackend) GetPrompt(_ context.Context, server, name string, args map[string]string) (*sdk.GetPromptResult, error) {
	f.record(fmt.Sprintf("prompt %s %s %v", server, name, args))
	return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "prompt text for " + args["topic"]}}}}, nil
}

func (f *fakeBackend) record(s string) {
	f.mu.Lock()
	f.actions = append(f.actions, s)
	f.mu.Unlock()
}

// waitDid waits until the backend was asked to do s (its calls come from
// the UI's commands, off the test's goroutine), and reports whether it was.
func (f *fakeBackend) waitDid(s string) bool {
	deadline := time.Now().Add(20 * time.Second)
	for !f.did(s) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func (f *fakeBackend) did(s string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.actions {
		if a == s {
			return true
		}
	}
	return false
}

func (f *fakeBackend) Reload(context.Context) (servers.ReloadDiff, error) {
	f.record("reload")
	if f.reload != nil {
		return f.reload(), nil
	}
	return servers.ReloadDiff{}, nil
}

func (f *fakeBackend) ToolChanges(s string) ([]app.ToolChange, error) {
	f.record("changes " + s)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changes, nil
}

func (f *fakeBackend) ApproveTools(_ context.Context, s string) error {
	f.record("approve " + s)
	return nil
}

func (f *fakeBackend) Reconnect(_ context.Context, s string) error {
	f.record("reconnect " + s)
	return nil
}

func (f *fakeBackend) SetEnabled(_ context.Context, s string, on bool) error {
	f.record(fmt.Sprintf("enable %s %v", s, on))
	return nil
}

func (f *fakeBackend) Login(_ context.Context, s string) error {
	f.record("login " + s)
	return nil
}

func (f *fakeBackend) CallTool(ctx context.Context, name string, args json.RawMessage) (*tool.Result, error) {
	f.record("call " + name + " " + string(args))
	if f.call != nil {
		return f.call(ctx, name, args)
	}
	return &tool.Result{Content: []sdk.Content{&sdk.TextContent{Text: "called " + name}}}, nil
}

func (f *fakeBackend) Send(ctx context.Context, text string, emit func(agent.Event)) error {
	f.record("send " + text)
	if f.send != nil {
		return f.send(ctx, text, emit)
	}
	emit(agent.TurnFinished{Text: "ok"})
	return nil
}

func (f *fakeBackend) ResetChat(context.Context) error { f.record("reset"); return nil }

func (f *fakeBackend) TrustPrompt() *TrustRequest { return f.trust }

func (f *fakeBackend) ConfigWarnings() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.warnings)
}

func (f *fakeBackend) Trust(context.Context, *TrustRequest) (servers.ReloadDiff, error) {
	f.record("trust")
	return servers.ReloadDiff{Added: []string{"proj"}}, nil
}

// --- harness ---

type harness struct {
	t  *testing.T
	ui *UI
	tm *teatest.TestModel
	b  *fakeBackend
	// changed has a value once the model updated since it was last read
	// (see model.updated): waits look at the screen again then, not on a
	// clock — drawing the screen every few milliseconds took a core.
	changed chan struct{}
}

func start(t *testing.T, b *fakeBackend, opts ...Options) *harness {
	t.Helper()
	return startWith(t, b, b, opts...)
}

// startWith is start for a backend that wraps b with more methods.
func startWith(t *testing.T, be Backend, b *fakeBackend, opts ...Options) *harness {
	t.Helper()
	return startModel(t, be, b, nil, opts...)
}

// fakeClock is a clock that moves only when the test moves it.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// startModel is startWith with setup run on the model before it starts.
func startModel(t *testing.T, be Backend, b *fakeBackend, setup func(*model), opts ...Options) *harness {
	t.Helper()
	if b.provider == (Provider{}) {
		b.provider = Provider{Name: "fake", Model: "m1"}
	}
	o := Options{ImageDir: t.TempDir()}
	if len(opts) > 0 {
		o = opts[0]
	}
	u := New(o)
	m := newModel(u, be)
	if setup != nil {
		setup(m)
	}
	return runHarness(t, u, m, b)
}

// runHarness runs m (a model of u) in teatest, 100×32, and returns the
// harness that drives it; the program ends with the test.
func runHarness(t *testing.T, u *UI, m *model, b *fakeBackend, opts ...teatest.TestOption) *harness {
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
	deadline := time.Now().Add(20 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		s = h.screen()
		ok := true
		for _, w := range want {
			if !strings.Contains(s, w) {
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
