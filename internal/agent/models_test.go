package agent_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/record"
	"github.com/otter-sh/otter/internal/session"
	"github.com/otter-sh/otter/internal/toolname"
)

// The case: a local Ollama model otter has no figures for, 47
// tools, no context_window set, a server that refuses past 8,192 tokens.
// Each turn is a new agent continuing the saved conversation (as `-c -p`
// does) with the window cache on disk: all 20 turns answer, the window is
// learned from /api/show (num_ctx) once, and it is known, not guessed.
func TestLearnsTheWindowFromOllama(t *testing.T) {
	t.Parallel()
	cache := filepath.Join(t.TempDir(), "windows.json")
	var history []llm.Message
	var srv *llmtest.Server
	for turn := range 20 {
		h := newHarness(t, llmtest.OpenAI, setup{opts: func(o *agent.Options) { o.Windows = llm.NewWindowCache(cache) }})
		if srv == nil {
			srv = h.srv
			srv.Host, srv.ContextWindow = llmtest.HostOllama, 8192
			srv.Info = map[string]llmtest.ModelInfo{"test-model": {Window: 40960, Loaded: 8192}}
			srv.Respond = func(llmtest.Request) llmtest.Reply {
				return llmtest.Reply{Text: []string{strings.Repeat("An answer of some length about the matter at hand. ", 30)}}
			}
		}
		h.agent.SetProvider(srv.Provider(), "test-model")
		withMany(t, h, 44) // with calc's 3: 47 tools
		if err := h.agent.Load(history, nil); err != nil {
			t.Fatal(err)
		}
		if err := h.send(t, "Tell me more about the matter, turn "+strings.Repeat("x", turn)); err != nil {
			t.Fatalf("turn %d: %v", turn+1, err)
		}
		history = h.agent.Messages()
		c := h.agent.Context()
		if c.Window != 8192 || !c.WindowKnown {
			t.Fatalf("turn %d: window %d known=%v, want the 8192 Ollama runs the model with", turn+1, c.Window, c.WindowKnown)
		}
	}
	for i, r := range srv.Requests() {
		if r.Refused != "" {
			t.Errorf("request %d was refused: %s", i, r.Refused)
		}
	}
	if n := srv.HostCalls()["show test-model"]; n != 1 {
		t.Errorf("/api/show asked %d times, want once (then the cache answers)", n)
	}
}

// A window stated in a refusal re-plans the tools before the retry: the
// retry offers tool_search, not all the tools that did not fit.
func TestRefusalWindowReplansTools(t *testing.T) {
	t.Parallel()
	h := newHarness(t, llmtest.OpenAI, setup{opts: knownWindow}, llmtest.Reply{Text: []string{"ok"}})
	h.srv.ContextWindow = 4000
	withMany(t, h, 60)
	if err := h.send(t, "hi"); err != nil {
		t.Fatal(err)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 2 || reqs[0].Refused == "" {
		t.Fatalf("want a refused request and its retry, got %d requests", len(reqs))
	}
	if len(reqs[1].Tools) >= len(reqs[0].Tools) || !containsTool(reqs[1].Tools, agent.ToolSearchName) {
		t.Errorf("retry offers %d tools (first %d), want fewer, with tool_search", len(reqs[1].Tools), len(reqs[0].Tools))
	}
	if c := h.agent.Context(); c.Window != 4000 {
		t.Errorf("window = %d, want the 4000 the provider stated", c.Window)
	}
}

func containsTool(tools []string, name string) bool {
	for _, n := range tools {
		if n == name {
			return true
		}
	}
	return false
}

// 24.7: a server's instructions go into every request, so each is cut to
// its share of the window, with a note; 5 MB stay 5 MB no longer.
func TestServerInstructionsAreCapped(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("Always call the tools in order.\n", 5<<20/32)
	h := newHarness(t, llmtest.Anthropic, setup{opts: func(o *agent.Options) {
		knownWindow(o)
		o.Instructions = func() map[string]string { return map[string]string{"calc": huge, "small": "Use small things."} }
	}}, llmtest.Reply{Text: []string{"ok"}})
	if err := h.send(t, "hi"); err != nil {
		t.Fatal(err)
	}
	sys := h.srv.Requests()[0].System
	if len(sys) > 20_000 {
		t.Errorf("system prompt is %d bytes with 5 MB of instructions, want them capped (≤ 8 KB a server)", len(sys))
	}
	if !strings.Contains(sys, "otter cut this server's instructions") || !strings.Contains(sys, "Use small things.") {
		t.Errorf("want the cut noted and the small server's instructions whole:\n%s", sys)
	}
}

// Thinking on with a strict fake Anthropic: a 3-step tool loop passes with
// the thinking blocks (signed and redacted) sent back as the API requires;
// a new agent resuming the conversation continues with thinking intact.
func TestThinkingToolLoopAndResume(t *testing.T) {
	t.Parallel()
	add := toolname.Qualified("calc", "add")
	step := func(id string, a int) llmtest.Reply {
		return llmtest.Reply{Thinking: []string{"I should add ", "the numbers."}, Calls: []llmtest.Call{{ID: id, Name: add, Args: `{"a":1,"b":` + string(rune('0'+a)) + `}`}}}
	}
	third := step("c3", 3)
	third.Redacted = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"
	thinking := func(o *agent.Options) { knownWindow(o); o.Thinking = llm.Thinking{Effort: llm.ThinkingLow} }
	h := newHarness(t, llmtest.Anthropic, setup{opts: thinking},
		step("c1", 1), step("c2", 2), third, llmtest.Reply{Thinking: []string{"Done."}, Text: []string{"1+1, 1+2, 1+3 = 2, 3, 4."}})
	h.srv.ContextWindow = 200_000 // so that the fake reports usage
	var thought strings.Builder
	if err := h.send(t, "Add 1 to 1, 2 and 3, one at a time."); err != nil {
		t.Fatal(err)
	}
	for _, ev := range h.allEvents() {
		if d, ok := ev.(agent.ThinkingDelta); ok {
			thought.WriteString(d.Text)
		}
	}
	if !strings.Contains(thought.String(), "I should add the numbers.") {
		t.Errorf("thinking streamed as events: %q", thought.String())
	}
	reqs := h.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	for i, r := range reqs {
		if r.Thinking < llm.MinThinkingBudget || r.Refused != "" {
			t.Errorf("request %d: thinking budget %d, refused %q", i, r.Thinking, r.Refused)
		}
	}
	last := reqs[3].Messages
	var a3 llmtest.Message
	for _, m := range last {
		if m.Role == "assistant" {
			a3 = m
		}
	}
	if len(a3.Thinking) != 1 || a3.Redacted != 1 {
		t.Errorf("last tool turn sent back thinking %q, %d redacted; want its signed and redacted blocks", a3.Thinking, a3.Redacted)
	}

	// Resume: a new agent loads the conversation and goes on thinking.
	r := newHarness(t, llmtest.Anthropic, setup{opts: thinking}, step("c4", 4), llmtest.Reply{Text: []string{"5."}})
	if err := r.agent.Load(h.agent.Messages(), nil); err != nil {
		t.Fatal(err)
	}
	if err := r.send(t, "And 1+4?"); err != nil {
		t.Fatal(err)
	}
	for i, req := range r.srv.Requests() {
		if req.Refused != "" || req.Thinking == 0 {
			t.Errorf("resumed request %d: refused %q, thinking %d", i, req.Refused, req.Thinking)
		}
	}
	var u llm.Usage
	for _, c := range h.agent.Costs() {
		u = u.Add(c.Usage)
	}
	if u.ReasoningTokens == 0 {
		t.Errorf("usage counts no reasoning tokens: %+v", u)
	}
}

// The same loop over the OpenAI Responses API with reasoning on: a 3-step
// tool loop whose reasoning items (encrypted, stateless) go back with the
// calls they led to; the session is saved, resumed by a new agent from the
// store and continued with the reasoning intact — the strict fake refuses
// a call whose reasoning was lost.
func TestResponsesReasoningToolLoopAndResume(t *testing.T) {
	t.Parallel()
	add := toolname.Qualified("calc", "add")
	step := func(id string, a int) llmtest.Reply {
		return llmtest.Reply{Thinking: []string{"I should add ", "the numbers."}, Text: []string{"Adding."},
			Calls: []llmtest.Call{{ID: id, Name: add, Args: `{"a":1,"b":` + string(rune('0'+a)) + `}`}}}
	}
	store := openStore(t)
	rec := session.NewRecorder(store, record.Info{Cwd: "/work/project", Model: "test-model"}, func(err error) { t.Error(err) })
	thinking := func(o *agent.Options) { knownWindow(o); o.Thinking = llm.Thinking{Effort: llm.ThinkingMedium} }
	h := newHarness(t, llmtest.Responses, setup{opts: func(o *agent.Options) { thinking(o); o.Recorder = rec }},
		step("call_1", 1), step("call_2", 2), step("call_3", 3), llmtest.Reply{Thinking: []string{"Done."}, Text: []string{"2, 3, 4."}})
	h.srv.ContextWindow = 200_000 // so that the fake reports usage
	if err := h.send(t, "Add 1 to 1, 2 and 3, one at a time."); err != nil {
		t.Fatal(err)
	}
	var thought strings.Builder
	for _, ev := range h.allEvents() {
		if d, ok := ev.(agent.ThinkingDelta); ok {
			thought.WriteString(d.Text)
		}
	}
	if !strings.Contains(thought.String(), "I should add the numbers.") {
		t.Errorf("reasoning summaries streamed as events: %q", thought.String())
	}
	reqs := h.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	for i, r := range reqs {
		if r.Effort != llm.ThinkingMedium || r.Refused != "" {
			t.Errorf("request %d: effort %q, refused %q", i, r.Effort, r.Refused)
		}
	}
	// The last request carries each tool turn's reasoning back.
	var turns int
	for _, m := range reqs[3].Messages {
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			turns++
			if len(m.Thinking) != 1 || m.Thinking[0] != "I should add the numbers." {
				t.Errorf("tool turn %d sent back reasoning %q", turns, m.Thinking)
			}
		}
	}
	if turns != 3 {
		t.Errorf("%d tool turns in the last request, want 3", turns)
	}
	var u llm.Usage
	for _, c := range h.agent.Costs() {
		u = u.Add(c.Usage)
	}
	if u.ReasoningTokens == 0 || u.OutputTokens < u.ReasoningTokens {
		t.Errorf("usage %+v, want reasoning tokens counted within the output", u)
	}

	// Resume from the session store: a new agent loads what was saved and
	// goes on reasoning through another tool call.
	history, err := store.History(context.Background(), rec.ID())
	if err != nil {
		t.Fatal(err)
	}
	r := newHarness(t, llmtest.Responses, setup{opts: thinking}, step("call_4", 4), llmtest.Reply{Text: []string{"5."}})
	if err := r.agent.Load(history, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.send(t, "And 1+4?"); err != nil {
		t.Fatal(err)
	}
	resumed := r.srv.Requests()
	if len(resumed) != 2 {
		t.Fatalf("%d resumed requests, want 2", len(resumed))
	}
	turns = 0
	for _, m := range resumed[1].Messages {
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			turns++
			if len(m.Thinking) != 1 {
				t.Errorf("resumed tool turn %d sent back reasoning %q", turns, m.Thinking)
			}
		}
	}
	if turns != 4 || resumed[1].Refused != "" {
		t.Errorf("resumed: %d tool turns, refused %q; want 4, accepted", turns, resumed[1].Refused)
	}
}
