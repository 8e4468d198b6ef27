package agent_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/toolname"
)

// manyServer is an in-process MCP server "many" with n tools about
// records of a few services, none of which adds numbers.
func manyServer(t testing.TB, n int) []tool.Tool {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1.0"}, &mcp.ServerOptions{Instructions: "Records of every service."})
	verbs := []string{"Get", "List", "Create", "Archive", "Export", "Delete"}
	nouns := []string{"invoice", "customer", "ticket", "calendar event", "document", "deployment", "secret"}
	for i := range n {
		v, o := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		name := fmt.Sprintf("%s_%s_%d", strings.ToLower(v), strings.ReplaceAll(o, " ", "_"), i)
		mcp.AddTool(srv, &mcp.Tool{Name: name, Description: fmt.Sprintf("%s a %s of the workspace %d and return it as JSON.", v, o, i%40)},
			func(context.Context, *mcp.CallToolRequest, struct {
				ID string `json:"id" jsonschema:"the record's id"`
			}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil, nil
			})
	}
	return connectServer(t, "many", srv, nil)
}

// withMany adds the "many" server to a harness and sets its tool search.
func withMany(t testing.TB, h *harness, n int) {
	h.set.SetServerTools("many", manyServer(t, n))
}

// toolSearchOpts sets the agent's ToolSearch.
func toolSearchOpts(ts agent.ToolSearch) func(*agent.Options) {
	return func(o *agent.Options) {
		o.ToolSearch = ts
		o.Instructions = func() map[string]string {
			return map[string]string{"calc": "Use add for sums.\nMore lines.", "many": "Records of every service."}
		}
	}
}

// The core: with more tools than the provider's cap (OpenAI) or
// the budget (Anthropic), the model is offered tool_search, finds the tool
// that adds, is offered it in the next call of the same turn, and its call
// runs.
func TestDeferredToolIsFoundLoadedAndCalled(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		add := toolname.Qualified("calc", "add")
		h := newHarness(t, kind, setup{opts: toolSearchOpts(agent.ToolSearch{Budget: 3000})},
			llmtest.Reply{Calls: []llmtest.Call{{ID: "call_search", Name: agent.ToolSearchName, Args: `{"query":"add two numbers"}`}}},
			llmtest.Reply{Calls: []llmtest.Call{{ID: "call_add", Name: add, Args: `{"a":2,"b":3}`}}},
			llmtest.Reply{Text: []string{"2+3 = 5."}},
		)
		withMany(t, h, 400)
		if err := h.send(t, "What is 2+3?"); err != nil {
			t.Fatalf("Send: %v", err)
		}
		reqs := h.srv.Requests()
		if len(reqs) != 3 {
			t.Fatalf("model got %d requests, want 3", len(reqs))
		}
		first := reqs[0].Tools
		if len(first) > 128 || !slices.Contains(first, agent.ToolSearchName) || !slices.Contains(first, "lookup_word") || slices.Contains(first, add) {
			t.Errorf("first request offers %d tools %v; want ≤ 128 with tool_search and the built-ins, without %s", len(first), first, add)
		}
		if !strings.Contains(reqs[0].System, "- calc: 3 tools — Use add for sums.\n") || !strings.Contains(reqs[0].System, "- many: 400 tools — Records of every service.") {
			t.Errorf("system prompt does not name the servers with their tool counts:\n%s", reqs[0].System)
		}
		res := reqs[1].LastToolResults()
		if len(res) != 1 || res[0].IsError || !strings.HasPrefix(res[0].Text, add+" (server calc): Add two numbers\n") {
			t.Errorf("tool_search result = %+v, want %s first", res, add)
		}
		if !slices.Contains(reqs[1].Tools, add) || len(reqs[1].Tools) > 128 {
			t.Errorf("second request offers %v, want %s loaded", reqs[1].Tools, add)
		}
		if res := reqs[2].LastToolResults(); len(res) != 1 || res[0].Text != "5" {
			t.Errorf("add's result = %+v", res)
		}
		if f := h.finished(t); f.Err != nil || f.Text != "2+3 = 5." {
			t.Errorf("TurnFinished = %+v", f)
		}
		fins := h.toolFinished()
		sr, ok := fins[0].Result.StructuredContent.(agent.SearchResult)
		if !ok || sr.Query != "add two numbers" || len(sr.Matches) == 0 || sr.Matches[0].Name != add || sr.Matches[0].Server != "calc" {
			t.Errorf("tool_search's structured result = %#v", fins[0].Result.StructuredContent)
		}
		offer := h.agent.ToolOffer()
		if !slices.Contains(h.agent.LoadedTools(), add) || !offer.Deferring || offer.Deferred[add] || !offer.Deferred[toolname.Qualified("many", "get_invoice_0")] {
			t.Errorf("loaded tools %v, offer %v: want %s loaded, many's get_invoice_0 deferred", h.agent.LoadedTools(), offer.Deferring, add)
		}
	})
}

// knownWindow makes the model's window a known 200,000 tokens.
func knownWindow(o *agent.Options) {
	o.Facts = func(p, m string) llm.ModelFacts {
		f := llm.Facts(llm.Configured{}, m)
		f.ContextWindow, f.WindowKnown = 200_000, true
		return f
	}
}

// With few tools nothing changes: every tool is offered, and there is no
// tool_search.
func TestFewToolsAreAllOffered(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		h := newHarness(t, kind, setup{opts: knownWindow}, llmtest.Reply{Text: []string{"Hi."}})
		withMany(t, h, 20)
		if err := h.send(t, "hi"); err != nil {
			t.Fatal(err)
		}
		req := h.srv.Requests()[0]
		var want []string
		for _, e := range h.set.Entries() {
			want = append(want, e.Name)
		}
		if !slices.Equal(req.Tools, want) {
			t.Errorf("offered %v, want every tool %v", req.Tools, want)
		}
		if strings.Contains(req.System, "tool_search") {
			t.Errorf("system prompt mentions tool_search:\n%s", req.System)
		}
	})
}

// A call of a deferred tool by its exact name runs it (asking as always
// when it needs permission) and loads it.
func TestDeferredToolCalledByName(t *testing.T) {
	t.Parallel()
	name := toolname.Qualified("many", "delete_invoice_5")
	h := newHarness(t, llmtest.OpenAI, setup{opts: toolSearchOpts(agent.ToolSearch{Mode: agent.ToolSearchAlways})},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: name, Args: `{"id":"x"}`}}},
		llmtest.Reply{Text: []string{"Done."}},
	)
	withMany(t, h, 30)
	h.approver.decisions = append(h.approver.decisions, ask.AllowOnce)
	if err := h.send(t, "delete invoice 5"); err != nil {
		t.Fatal(err)
	}
	reqs := h.srv.Requests()
	if slices.Contains(reqs[0].Tools, name) || !slices.Contains(reqs[1].Tools, name) {
		t.Errorf("offered %v then %v; want %s deferred, then loaded", reqs[0].Tools, reqs[1].Tools, name)
	}
	if p := h.approver.prompts(); len(p) != 1 || p[0].Tool != name {
		t.Errorf("permission prompts = %+v, want one for %s", p, name)
	}
	if res := reqs[1].LastToolResults(); len(res) != 1 || res[0].Text != "delete_invoice_5" {
		t.Errorf("result = %+v", res)
	}
}

// Loaded tools past the budget are unloaded, least recently used first;
// always_load servers stay offered.
func TestLoadedToolsAreUnloadedLeastRecentlyUsedFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t, llmtest.OpenAI, setup{opts: toolSearchOpts(agent.ToolSearch{Mode: agent.ToolSearchAlways, Budget: 300, AlwaysLoad: map[string]bool{"calc": true}})},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "s1", Name: agent.ToolSearchName, Args: `{"query":"invoice","limit":2}`}}},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "s2", Name: agent.ToolSearchName, Args: `{"query":"secret","limit":20}`}}},
		llmtest.Reply{Text: []string{"ok"}},
	)
	withMany(t, h, 300)
	rec := &stateRecorder{}
	h.agent.SetRecorder(rec)
	if err := h.send(t, "look around"); err != nil {
		t.Fatal(err)
	}
	if saved := rec.last(agent.LoadedToolsState); !slices.Equal(saved, h.agent.LoadedTools()) || len(saved) == 0 {
		t.Errorf("the session saved loaded tools %v, the agent has %v", saved, h.agent.LoadedTools())
	}
	reqs := h.srv.Requests()
	mcpTools := func(r llmtest.Request, server string) []string {
		var out []string
		for _, n := range r.Tools {
			if strings.HasPrefix(n, toolname.Prefix(server)) {
				out = append(out, n)
			}
		}
		return out
	}
	if got := mcpTools(reqs[0], "calc"); len(got) != 3 {
		t.Errorf("always_load calc offers %v, want its 3 tools", got)
	}
	if got := mcpTools(reqs[0], "many"); len(got) != 0 {
		t.Errorf("first request offers %v of many, want none", got)
	}
	invoices := mcpTools(reqs[1], "many")
	if len(invoices) != 2 || !strings.Contains(invoices[0], "invoice") {
		t.Fatalf("after searching invoice: %v", invoices)
	}
	after := mcpTools(reqs[2], "many")
	if len(after) == 0 || len(after) >= 20 {
		t.Fatalf("after searching secret with a small budget: %v", after)
	}
	for _, n := range after {
		if !strings.Contains(n, "secret") {
			t.Errorf("%s is still loaded; the invoice tools were used least recently and should be unloaded first: %v", n, after)
		}
	}
	if got := mcpTools(reqs[2], "calc"); len(got) != 3 {
		t.Errorf("always_load calc offers %v after unloading, want its 3 tools", got)
	}
}

// A resumed conversation loads the tools it had loaded.
func TestLoadToolsOffersThemAtOnce(t *testing.T) {
	t.Parallel()
	name := toolname.Qualified("many", "create_ticket_14")
	h := newHarness(t, llmtest.Anthropic, setup{opts: toolSearchOpts(agent.ToolSearch{Mode: agent.ToolSearchAlways})}, llmtest.Reply{Text: []string{"hi"}})
	withMany(t, h, 30)
	h.agent.LoadTools([]string{name})
	if err := h.send(t, "hi"); err != nil {
		t.Fatal(err)
	}
	if tools := h.srv.Requests()[0].Tools; !slices.Contains(tools, name) || !slices.Contains(tools, agent.ToolSearchName) {
		t.Errorf("offered %v, want the loaded %s and tool_search", tools, name)
	}
}

// tool_search without a query tells the model how to call it.
func TestToolSearchWithoutQuery(t *testing.T) {
	t.Parallel()
	h := newHarness(t, llmtest.OpenAI, setup{opts: toolSearchOpts(agent.ToolSearch{Mode: agent.ToolSearchAlways})},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "s1", Name: agent.ToolSearchName, Args: `{}`}}},
		llmtest.Reply{Text: []string{"ok"}},
	)
	if err := h.send(t, "x"); err != nil {
		t.Fatal(err)
	}
	if res := h.srv.Requests()[1].LastToolResults(); len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].Text, `"query"`) {
		t.Errorf("result = %+v", res)
	}
}

// The budget is a tenth of a small window (from the model table and the
// provider's config), and never more than DefaultToolBudget, whatever the
// window: a dozen servers' tools are deferred even with a 1M window.
func TestBudgetFollowsTheContextWindow(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		window, tools int
		deferred      bool
	}{
		{20_000, 150, true},    // about 6,000 tokens of definitions > 2,000
		{1_000_000, 60, false}, // under 8,000
		{1_000_000, 400, true}, // about 16,000 tokens: deferred on any window
	} {
		window := c.window
		facts := func(p, m string) llm.ModelFacts {
			return llm.Facts(llm.Configured{Limits: []llm.Limits{{ContextWindow: window}}}, m)
		}
		h := newHarness(t, llmtest.Anthropic, setup{opts: func(o *agent.Options) { o.Facts = facts }}, llmtest.Reply{Text: []string{"hi"}})
		withMany(t, h, c.tools)
		if err := h.send(t, "hi"); err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(h.srv.Requests()[0].Tools, agent.ToolSearchName); got != c.deferred {
			t.Errorf("window %d, %d tools: tools deferred = %v, want %v", c.window, c.tools, got, c.deferred)
		}
		// ToolSearch.Defers decides as the agent did, for tools not in a
		// set yet (a lazily started server's known tools).
		var known []tool.Entry
		builtins := 0
		for _, e := range h.set.Entries() {
			if e.Info.Server == "" {
				builtins++
			} else {
				known = append(known, e)
			}
		}
		if got := (agent.ToolSearch{}).Defers(known, builtins, h.srv.Provider(), "test-model", facts, nil); got != c.deferred {
			t.Errorf("window %d, %d tools: Defers = %v, the agent deferred: %v", c.window, c.tools, got, c.deferred)
		}
		if (agent.ToolSearch{Mode: agent.ToolSearchNever}).Defers(known, builtins, h.srv.Provider(), "test-model", facts, nil) ||
			!(agent.ToolSearch{Mode: agent.ToolSearchAlways}).Defers(known, builtins, h.srv.Provider(), "test-model", facts, nil) {
			t.Errorf("Defers does not follow tool_search = never / always")
		}
	}
}

// stateRecorder keeps what the agent saves with a session.
type stateRecorder struct {
	mu    sync.Mutex
	state map[string]any
}

func (r *stateRecorder) RecordMessage(llm.Message, llm.Usage) {}
func (r *stateRecorder) RecordToolResult(llm.ToolResult)      {}
func (r *stateRecorder) RecordAllowed(string)                 {}
func (r *stateRecorder) RecordState(key string, value any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == nil {
		r.state = map[string]any{}
	}
	r.state[key] = value
}

func (r *stateRecorder) last(key string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, _ := r.state[key].([]string)
	return v
}
