package mcphost

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/render"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
)

func TestStdioServerEndToEnd(t *testing.T) {
	el := &eliciter{reply: ask.ElicitReply{Action: ask.Accept, Content: map[string]any{"name": "ada"}}}
	var sampled []string
	var sampleMu sync.Mutex
	sampler := func(ctx context.Context, server string, req *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
		sampleMu.Lock()
		sampled = append(sampled, server)
		sampleMu.Unlock()
		return &sdk.CreateMessageResult{Role: "assistant", Model: "test", Content: &sdk.TextContent{Text: "sampled: " + req.Messages[0].Content.(*sdk.TextContent).Text}}, nil
	}
	root := t.TempDir()
	h := newHarness(t, configOf(stdioServer(t, "normal", "normal")), servers.Options{Eliciter: el, Sampler: sampler, Roots: []string{root}})
	h.m.Start(context.Background())
	if err := h.m.WaitSettled(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, _ := h.m.Status("normal")
	if st.State != servers.StateConnected {
		t.Fatalf("state = %s (%s), want connected", st.State, st.Error)
	}
	if st.Tools < 10 || st.Prompts != 1 || st.Resources != 1 {
		t.Errorf("counts: tools %d prompts %d resources %d", st.Tools, st.Prompts, st.Resources)
	}
	if st.ServerInfo != "otter-test-normal 1.0.0" || st.Transport != "stdio" {
		t.Errorf("server info %q transport %q", st.ServerInfo, st.Transport)
	}
	if got := h.m.Instructions()["normal"]; got != "Use echo to echo." {
		t.Errorf("instructions = %q", got)
	}

	// Tools reach the Set under their qualified names.
	if _, ok := h.set.Lookup("mcp__normal__echo"); !ok {
		t.Fatalf("mcp__normal__echo not in the set; entries: %v", entryNames(h.set))
	}
	if got := h.callText("normal", "echo", `{"text":"hi there"}`); got != "hi there" {
		t.Errorf("echo = %q", got)
	}
	if got := h.callText("normal", "add", `{"a":2,"b":3}`); got != "5" {
		t.Errorf("add = %q", got)
	}

	// Progress reaches the calling context; roots are the given directory.
	var progress []tool.Progress
	var pmu sync.Mutex
	ctx := tool.WithProgress(context.Background(), func(p tool.Progress) {
		pmu.Lock()
		progress = append(progress, p)
		pmu.Unlock()
	})
	res, err := h.call(ctx, "normal", "progress", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := fileRoot(root).URI; render.Model(res) != want || !strings.HasPrefix(want, "file:///") {
		t.Errorf("roots = %q, want %q", render.Model(res), want)
	}
	pmu.Lock()
	if len(progress) != 3 || progress[2].Progress != 3 || progress[2].Total != 3 || progress[2].Message != "step 3" {
		t.Errorf("progress = %+v", progress)
	}
	pmu.Unlock()

	// Elicitation: the schema's defaults fill what the reply left out.
	got := h.callText("normal", "elicit", `{}`)
	var content map[string]any
	if !strings.HasPrefix(got, "accept ") || json.Unmarshal([]byte(strings.TrimPrefix(got, "accept ")), &content) != nil {
		t.Fatalf("elicit = %q", got)
	}
	want := map[string]any{"name": "ada", "count": 3.0, "flag": true}
	if len(content) != len(want) || content["name"] != "ada" || content["count"] != 3.0 || content["flag"] != true {
		t.Errorf("elicited content = %v, want %v", content, want)
	}
	if len(el.got) != 1 || el.got[0].Server != "normal" || el.got[0].Mode != "form" || !strings.Contains(string(el.got[0].Schema), `"default":"otter"`) {
		t.Errorf("elicitation request = %+v", el.got)
	}

	// URL mode.
	if got := h.callText("normal", "elicit_url", `{}`); got != "accept" {
		t.Errorf("elicit_url = %q", got)
	}
	if len(el.got) != 2 || el.got[1].Mode != "url" || el.got[1].URL != "https://example.com/connect?x=1" || el.got[1].ID != "el-1" || el.got[1].Message != "Connect your account" {
		t.Errorf("url elicitation request = %+v", el.got[1:])
	}

	// Sampling goes through the Sampler with the server's name.
	if got := h.callText("normal", "sample", `{}`); got != "sampled: hello" {
		t.Errorf("sample = %q", got)
	}
	if len(sampled) != 1 || sampled[0] != "normal" {
		t.Errorf("sampler calls = %v", sampled)
	}

	// Logging notifications become events.
	h.callText("normal", "log", `{}`)
	logs := h.eventsOf(func(e servers.Event) bool { _, ok := e.(servers.ServerLog); return ok })
	if len(logs) != 1 || logs[0].(servers.ServerLog).Level != "warning" || string(logs[0].(servers.ServerLog).Data) != `"disk almost full"` {
		t.Errorf("log events = %+v", logs)
	}

	// Prompts and resources.
	prompts := h.m.Prompts()
	if len(prompts) != 1 || prompts[0].Name != "greet" || prompts[0].Server != "normal" {
		t.Fatalf("prompts = %+v", prompts)
	}
	pr, err := h.m.GetPrompt(context.Background(), "normal", "greet", map[string]string{"who": "otter"})
	if err != nil || pr.Messages[0].Content.(*sdk.TextContent).Text != "Hello, otter" {
		t.Errorf("GetPrompt = %v, %v", pr, err)
	}
	resources := h.m.Resources()
	if len(resources) != 1 || resources[0].URI != "test://readme" {
		t.Fatalf("resources = %+v", resources)
	}
	rr, err := h.m.ReadResource(context.Background(), "normal", "test://readme")
	if err != nil || rr.Contents[0].Text != "read me" {
		t.Errorf("ReadResource = %v, %v", rr, err)
	}

	// list_changed refreshes the Set.
	changed := make(chan struct{}, 10)
	h.set.OnChange(func() { changed <- struct{}{} })
	h.callText("normal", "add_tool", `{}`)
	deadline := time.After(liveness)
	for {
		if _, ok := h.set.Lookup("mcp__normal__extra"); ok {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("the tool added by the server never reached the set")
		}
	}
	if got := h.callText("normal", "extra", `{}`); got != "extra" {
		t.Errorf("extra = %q", got)
	}
	h.wait("normal", "the new prompt and resource", func(st servers.Status) bool {
		return st.Prompts == 2 && st.Resources == 2
	})
	if p := h.m.Prompts(); len(p) != 2 || p[0].Name != "extra" {
		t.Errorf("prompts after list_changed: %+v", p)
	}

	st, _ = h.m.Status("normal")
	if st.Calls != 9 || st.Errors != 0 || st.MedianLatency <= 0 {
		t.Errorf("figures: calls %d errors %d median %s", st.Calls, st.Errors, st.MedianLatency)
	}
}

func entryNames(s *tool.Set) []string {
	var out []string
	for _, e := range s.Entries() {
		out = append(out, e.Name)
	}
	return out
}

func TestCancellationReachesServer(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "mark")
	srv := stdioServer(t, "normal", "normal")
	srv.Env[envMark] = mark
	h := newHarness(t, configOf(srv), servers.Options{})
	h.m.Start(context.Background())
	h.waitState("normal", servers.StateConnected)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := h.call(ctx, "normal", "slow", `{}`)
		errc <- err
	}()
	for deadline := time.Now().Add(liveness); ; time.Sleep(10 * time.Millisecond) { // the call reached the server
		if b, _ := os.ReadFile(mark); string(b) == "started" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow call never reached the server")
		}
	}
	cancel()
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("cancelled call returned %v", err)
	}
	deadline := time.Now().Add(liveness)
	for {
		if b, _ := os.ReadFile(mark); string(b) == "cancelled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never saw the call cancelled")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The connection is fine afterwards.
	if got := h.callText("normal", "echo", `{"text":"still here"}`); got != "still here" {
		t.Errorf("echo after cancel = %q", got)
	}
}

func TestAllowedAndDeniedTools(t *testing.T) {
	srv := stdioServer(t, "normal", "normal")
	srv.AllowedTools = []string{"e*", "add"}
	srv.DeniedTools = []string{"elicit*"}
	h := newHarness(t, configOf(srv), servers.Options{})
	h.m.Start(context.Background())
	st := h.waitState("normal", servers.StateConnected)
	names := entryNames(h.set)
	want := []string{"mcp__normal__add", "mcp__normal__echo"}
	if !slices.Equal(names, want) || st.Tools != 2 {
		t.Errorf("tools = %v (count %d), want %v", names, st.Tools, want)
	}
}

// my.srv and my_srv give their tools the same qualified names. The tool set
// offers my.srv's; my_srv's status names each tool it lost and why, and the
// counts of offered tools say my_srv offers none of the ones it shares.
func TestToolsLostToAnotherServerAreNamed(t *testing.T) {
	dot, under := stdioServer(t, "my.srv", "normal"), stdioServer(t, "my_srv", "normal")
	under.AllowedTools = []string{"echo", "add"}
	h := newHarness(t, configOf(dot, under), servers.Options{})
	h.m.Start(context.Background())
	h.waitState("my.srv", servers.StateConnected)
	h.waitState("my_srv", servers.StateConnected)

	st, _ := h.m.Status("my_srv")
	var lost []string
	for _, c := range st.NotOffered {
		lost = append(lost, c.Dropped.Name)
		if c.Kept.Server != "my.srv" || !strings.Contains(c.String(), `taken by tool `+c.Dropped.Name+` of server "my.srv"`) {
			t.Errorf("collision %+v says %q", c, c)
		}
	}
	slices.Sort(lost)
	if st.Tools != 2 || !slices.Equal(lost, []string{"add", "echo"}) {
		t.Errorf("my_srv: %d tools, not offered %v; want 2 tools, add and echo not offered", st.Tools, lost)
	}
	if st, _ := h.m.Status("my.srv"); len(st.NotOffered) != 0 {
		t.Errorf("my.srv keeps its names, yet lists %v as not offered", st.NotOffered)
	}
	counts := h.set.ServerToolCounts()
	if st, _ := h.m.Status("my.srv"); counts["my_srv"] != 0 || counts["my.srv"] != st.Tools {
		t.Errorf("offered counts %v; want my_srv 0 and my.srv all its %d tools", counts, st.Tools)
	}
}

func TestDisabledServers(t *testing.T) {
	off := false
	a := stdioServer(t, "a", "normal")
	a.Enabled = &off
	b := stdioServer(t, "b", "normal")
	b.DisabledReason = "project directory /x is not trusted: run `otter trust /x`"
	h := newHarness(t, configOf(a, b), servers.Options{})
	h.m.Start(context.Background())
	if err := h.m.WaitSettled(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, st := range h.m.Statuses() {
		if st.State != servers.StateDisabled {
			t.Errorf("%s: state %s", st.Name, st.State)
		}
	}
	if st, _ := h.m.Status("b"); !strings.Contains(st.Error, "otter trust") {
		t.Errorf("b's reason = %q", st.Error)
	}
	if err := h.m.SetEnabled(context.Background(), "b", true); err == nil {
		t.Error("an untrusted server could be enabled")
	}
	if err := h.m.SetEnabled(context.Background(), "a", true); err != nil {
		t.Fatal(err)
	}
	h.waitState("a", servers.StateConnected)
	if err := h.m.SetEnabled(context.Background(), "a", false); err != nil {
		t.Fatal(err)
	}
	st := h.waitState("a", servers.StateDisabled)
	if st.Error != "disabled for this session" || len(h.set.Entries()) != 0 {
		t.Errorf("after disabling: %+v, entries %v", st, entryNames(h.set))
	}
}

func TestReloadRestartsOnlyChangedServers(t *testing.T) {
	a, b, c := stdioServer(t, "a", "normal"), stdioServer(t, "b", "normal"), stdioServer(t, "c", "normal")
	h := newHarness(t, configOf(a, b, c), servers.Options{})
	h.m.Start(context.Background())
	if err := h.m.WaitSettled(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := map[string]time.Time{}
	for _, st := range h.m.Statuses() {
		if st.State != servers.StateConnected {
			t.Fatalf("%s: %s %s", st.Name, st.State, st.Error)
		}
		before[st.Name] = st.ConnectedAt
	}
	b2 := b
	b2.Args = []string{"-test.v"}
	b2.Line = 42 // moving in the file is no change
	a2 := a
	a2.Line = 7
	d := stdioServer(t, "d", "normal")
	diff := h.m.Reload(context.Background(), configOf(a2, b2, d))
	want := servers.ReloadDiff{Added: []string{"d"}, Removed: []string{"c"}, Changed: []string{"b"}, Unchanged: []string{"a"}}
	if !slices.Equal(diff.Added, want.Added) || !slices.Equal(diff.Removed, want.Removed) ||
		!slices.Equal(diff.Changed, want.Changed) || !slices.Equal(diff.Unchanged, want.Unchanged) {
		t.Fatalf("diff = %+v, want %+v", diff, want)
	}
	if err := h.m.WaitSettled(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := map[string]servers.Status{}
	for _, st := range h.m.Statuses() {
		after[st.Name] = st
	}
	if _, ok := after["c"]; ok {
		t.Error("c is still listed")
	}
	if !after["a"].ConnectedAt.Equal(before["a"]) {
		t.Error("a was restarted although it did not change")
	}
	if after["b"].State != servers.StateConnected || after["b"].ConnectedAt.Equal(before["b"]) {
		t.Errorf("b was not restarted: %+v", after["b"])
	}
	if after["d"].State != servers.StateConnected {
		t.Errorf("d: %+v", after["d"])
	}
	for _, name := range entryNames(h.set) {
		if strings.HasPrefix(name, "mcp__c__") {
			t.Errorf("removed server's tool %s is still offered", name)
		}
	}
}

func TestUnknownCommandHasHint(t *testing.T) {
	srv := config.Server{Name: "n", Transport: "stdio", Command: "npx-not-installed-xyz"}
	h := newHarness(t, configOf(srv, config.Server{Name: "npx", Command: "/nonexistent/bin/npx"}), servers.Options{})
	t.Setenv("PATH", t.TempDir())
	h.m.Reload(context.Background(), configOf(srv, config.Server{Name: "npx", Command: "npx"}))
	h.m.Start(context.Background())
	st := h.waitState("npx", servers.StateFailed)
	want := `command "npx" not found on PATH: install Node.js (npx ships with npm) or give the full path in command`
	if st.Error != want {
		t.Errorf("error = %q\nwant    %q", st.Error, want)
	}
	st = h.waitState("n", servers.StateFailed)
	if !strings.Contains(st.Error, `command "npx-not-installed-xyz" not found on PATH`) {
		t.Errorf("error = %q", st.Error)
	}
}

// A front end may read the manager from its event handler.
func TestOnEventMayCallBack(t *testing.T) {
	var m *Manager
	var mu sync.Mutex
	var seen []servers.State
	m = New(configOf(stdioServer(t, "a", "normal")), servers.Options{OnEvent: func(e servers.Event) {
		if sc, ok := e.(servers.StateChanged); ok {
			st, _ := m.Status(sc.Status.Name)
			_ = m.Statuses()
			_ = m.Instructions()
			mu.Lock()
			seen = append(seen, st.State)
			mu.Unlock()
		}
	}})
	t.Cleanup(func() { m.Close(); assertNoProcessLeft(t) })
	m.Start(context.Background())
	if err := m.WaitSettled(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := m.Reconnect(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	// Reconnect may return before the handler has had the last event.
	deadline := time.Now().Add(liveness)
	for {
		mu.Lock()
		ok := len(seen) >= 4 && seen[len(seen)-1] == servers.StateConnected
		got := slices.Clone(seen)
		mu.Unlock()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("states seen from events: %v", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
