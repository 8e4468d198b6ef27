package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/render"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/toolname"
)

func TestPlainAnswer(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		h := newHarness(t, kind, setup{}, llmtest.Reply{Text: []string{"Otters ", "hold hands."}, InputTokens: 12, OutputTokens: 4})
		if err := h.send(t, "Tell me about otters"); err != nil {
			t.Fatalf("Send: %v", err)
		}
		if got := h.streamedText(); got != "Otters hold hands." {
			t.Errorf("streamed text = %q", got)
		}
		if f := h.finished(t); f.Text != "Otters hold hands." || f.Canceled || f.Err != nil {
			t.Errorf("TurnFinished = %+v", f)
		}
		var usage agent.Usage
		for _, ev := range h.allEvents() {
			if u, ok := ev.(agent.Usage); ok {
				usage = u
			}
		}
		if usage.InputTokens != 12 || usage.OutputTokens != 4 {
			t.Errorf("usage = %+v, want 12 in / 4 out", usage)
		}

		reqs := h.srv.Requests()
		if len(reqs) != 1 {
			t.Fatalf("server got %d requests, want 1", len(reqs))
		}
		r := reqs[0]
		if !r.Stream || r.Model != "test-model" {
			t.Errorf("stream=%v model=%q", r.Stream, r.Model)
		}
		wantTools := []string{"lookup_word", toolname.Qualified("calc", "add"), toolname.Qualified("calc", "ask_model"), toolname.Qualified("calc", "wait")}
		for _, w := range wantTools {
			if !slices.Contains(r.Tools, w) {
				t.Errorf("offered tools %v lack %s", r.Tools, w)
			}
		}
		for _, want := range []string{"Working directory: /work/project", "2026-03-04", "Use add for sums.", "Always answer in English."} {
			if !strings.Contains(r.System, want) {
				t.Errorf("system prompt lacks %q:\n%s", want, r.System)
			}
		}
		if len(r.Messages) != 1 || r.Messages[0].Role != "user" || r.Messages[0].Text != "Tell me about otters" {
			t.Errorf("messages = %+v", r.Messages)
		}
		if kind == llmtest.Anthropic && r.Header.Get("X-Api-Key") != "test-key" {
			t.Errorf("x-api-key header = %q", r.Header.Get("X-Api-Key"))
		}
		if kind == llmtest.OpenAI && r.Header.Get("Authorization") != "Bearer test-key" {
			t.Errorf("authorization header = %q", r.Header.Get("Authorization"))
		}
	})
}

func TestMCPAndBuiltinToolCalls(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		add := toolname.Qualified("calc", "add")
		h := newHarness(t, kind, setup{},
			llmtest.Reply{Text: []string{"Let me add."}, Calls: []llmtest.Call{{ID: "call_add", Name: add, Args: `{"a":2,"b":3}`}}},
			llmtest.Reply{Calls: []llmtest.Call{{ID: "call_word", Name: "lookup_word", Args: `{"word":"otter"}`}}},
			llmtest.Reply{Text: []string{"2+3 is 5; an otter is a mammal."}},
		)
		if err := h.send(t, "What is 2+3, and what is an otter?"); err != nil {
			t.Fatalf("Send: %v", err)
		}
		if f := h.finished(t); f.Text != "2+3 is 5; an otter is a mammal." {
			t.Errorf("final answer = %q", f.Text)
		}
		reqs := h.srv.Requests()
		if len(reqs) != 3 {
			t.Fatalf("server got %d requests, want 3", len(reqs))
		}
		if got := reqs[1].LastToolResults(); len(got) != 1 || got[0].CallID != "call_add" || got[0].Text != "5" || got[0].IsError {
			t.Errorf("MCP tool result sent back = %+v, want call_add → 5", got)
		}
		if got := reqs[2].LastToolResults(); len(got) != 1 || got[0].CallID != "call_word" || got[0].Text != "otter: a definition" {
			t.Errorf("built-in tool result sent back = %+v", got)
		}
		// The assistant's tool call is part of the history sent back.
		var sawCall bool
		for _, m := range reqs[2].Messages {
			for _, c := range m.ToolCalls {
				if c.ID == "call_add" && c.Name == add {
					var args map[string]float64
					if err := json.Unmarshal([]byte(c.Args), &args); err != nil || args["a"] != 2 || args["b"] != 3 {
						t.Errorf("tool call args sent back = %s", c.Args)
					}
					sawCall = true
				}
			}
		}
		if !sawCall {
			t.Errorf("request 3 does not carry the call_add tool call: %+v", reqs[2].Messages)
		}
		fins := h.toolFinished()
		if len(fins) != 2 || fins[0].ID != "call_add" || fins[0].Err != nil || render.Model(fins[0].Result) != "5" {
			t.Errorf("ToolCallFinished events = %+v", fins)
		}
		if len(h.approver.prompts()) != 0 {
			t.Errorf("read-only tools asked for permission: %+v", h.approver.prompts())
		}
	})
}

// A server that connects (or changes its tool list) while the model is
// working is offered from the next model call on, with its instructions.
func TestLateServerJoinsOnTheNextCall(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		late := toolname.Qualified("late", "ping")
		var instrMu sync.Mutex
		instr := map[string]string{"calc": "Use add for sums."}
		var h *harness
		joiner := &fakeTool{name: "lookup_word", readOnly: true, call: func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
			// The "late" server finishes connecting during this call.
			pong := &fakeTool{name: "ping", readOnly: true, schema: `{"type":"object"}`,
				call: func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.TextResult("pong"), nil }}
			h.set.SetServerTools("late", []tool.Tool{&serverTool{fakeTool: pong, server: "late"}})
			instrMu.Lock()
			instr["late"] = "Ping before you answer."
			instrMu.Unlock()
			return tool.TextResult("otter: a definition"), nil
		}}
		h = newHarness(t, kind, setup{builtins: []tool.Tool{joiner}, opts: func(o *agent.Options) {
			o.Instructions = func() map[string]string {
				instrMu.Lock()
				defer instrMu.Unlock()
				return maps.Clone(instr)
			}
		}},
			llmtest.Reply{Calls: []llmtest.Call{{ID: "call_word", Name: "lookup_word", Args: `{"word":"otter"}`}}},
			llmtest.Reply{Calls: []llmtest.Call{{ID: "call_ping", Name: late, Args: `{}`}}},
			llmtest.Reply{Text: []string{"pong received"}},
		)
		if err := h.send(t, "define otter, then ping"); err != nil {
			t.Fatalf("Send: %v", err)
		}
		reqs := h.srv.Requests()
		if len(reqs) != 3 {
			t.Fatalf("server got %d requests, want 3", len(reqs))
		}
		if slices.Contains(reqs[0].Tools, late) || strings.Contains(reqs[0].System, "Ping before you answer.") {
			t.Errorf("the first call already offered the late server: %v", reqs[0].Tools)
		}
		if !slices.Contains(reqs[1].Tools, late) || !strings.Contains(reqs[1].System, "Ping before you answer.") {
			t.Errorf("the second call does not offer the late server's tool and instructions: %v\n%s", reqs[1].Tools, reqs[1].System)
		}
		if got := reqs[2].LastToolResults(); len(got) != 1 || got[0].CallID != "call_ping" || got[0].Text != "pong" {
			t.Errorf("late tool result sent back = %+v", got)
		}
	})
}

// serverTool is a fakeTool that belongs to an MCP server.
type serverTool struct {
	*fakeTool
	server string
}

func (s *serverTool) Info() tool.Info {
	info := s.fakeTool.Info()
	info.Server = s.server
	return info
}

func TestParallelReadOnlyCalls(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		// Each call waits until both are running: they finish only if they
		// run in parallel (a sequential run would report "ran alone").
		var started sync.WaitGroup
		started.Add(2)
		both := make(chan struct{})
		go func() { started.Wait(); close(both) }()
		slow := &fakeTool{name: "fetch", readOnly: true, call: func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
			var in struct{ Word string }
			_ = json.Unmarshal(args, &in)
			started.Done()
			select {
			case <-both:
				return tool.TextResult("fetched " + in.Word), nil
			case <-time.After(20 * time.Second):
				return &tool.Result{IsError: true, Content: tool.TextResult("ran alone").Content}, nil
			}
		}}
		h := newHarness(t, kind, setup{builtins: []tool.Tool{slow}},
			llmtest.Reply{Calls: []llmtest.Call{
				{ID: "call_a", Name: "fetch", Args: `{"word":"a"}`},
				{ID: "call_b", Name: "fetch", Args: `{"word":"b"}`},
			}},
			llmtest.Reply{Text: []string{"done"}},
		)
		if err := h.send(t, "fetch a and b"); err != nil {
			t.Fatalf("Send: %v", err)
		}
		got := h.srv.Requests()[1].LastToolResults()
		if len(got) != 2 || got[0].CallID != "call_a" || got[0].Text != "fetched a" || got[1].CallID != "call_b" || got[1].Text != "fetched b" {
			t.Errorf("tool results sent back = %+v", got)
		}
	})
}

func TestToolErrorCorrectedByModel(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		add := toolname.Qualified("calc", "add")
		h := newHarness(t, kind, setup{},
			llmtest.Reply{Calls: []llmtest.Call{{ID: "call_bad", Name: add, Args: `{"a":"two","b":3}`}}},
			llmtest.Reply{Calls: []llmtest.Call{{ID: "call_good", Name: add, Args: `{"a":2,"b":3}`}}},
			llmtest.Reply{Text: []string{"5"}},
		)
		if err := h.send(t, "2+3?"); err != nil {
			t.Fatalf("Send: %v", err)
		}
		reqs := h.srv.Requests()
		if len(reqs) != 3 {
			t.Fatalf("server got %d requests, want 3", len(reqs))
		}
		bad := reqs[1].LastToolResults()
		if len(bad) != 1 || bad[0].CallID != "call_bad" || !bad[0].IsError || !strings.Contains(bad[0].Text, "a") {
			t.Errorf("invalid call's result = %+v, want an error naming the argument", bad)
		}
		good := reqs[2].LastToolResults()
		if len(good) != 1 || good[0].CallID != "call_good" || good[0].IsError || good[0].Text != "5" {
			t.Errorf("corrected call's result = %+v", good)
		}
		if f := h.finished(t); f.Text != "5" || f.Err != nil {
			t.Errorf("TurnFinished = %+v", f)
		}
	})
}

func TestRateLimitedThenSuccess(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		h := newHarness(t, kind, setup{},
			llmtest.Reply{Status: 429, Message: "slow down", Header: map[string]string{"Retry-After": "1"}},
			llmtest.Reply{Text: []string{"hello"}},
		)
		if err := h.send(t, "hi"); err != nil {
			t.Fatalf("Send: %v", err)
		}
		reqs := h.srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("server got %d requests, want 2 (a 429, then the retry)", len(reqs))
		}
		if gap := reqs[1].Received.Sub(reqs[0].Received); gap < 900*time.Millisecond {
			t.Errorf("retried after %v; retry-after asked for 1s", gap)
		}
		if f := h.finished(t); f.Text != "hello" {
			t.Errorf("TurnFinished = %+v", f)
		}
	})
}

func TestUnauthorizedIsNotRetried(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		h := newHarness(t, kind, setup{}, llmtest.Reply{Status: 401, Message: "invalid api key"})
		err := h.send(t, "hi")
		var apiErr *llm.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 {
			t.Fatalf("Send error = %v, want an *llm.Error with status 401", err)
		}
		if !strings.Contains(err.Error(), "authentication failed") || !strings.Contains(err.Error(), "invalid api key") {
			t.Errorf("error message = %q", err)
		}
		if n := len(h.srv.Requests()); n != 1 {
			t.Errorf("server got %d requests, want 1 (no retry on 401)", n)
		}
		// The conversation is kept: the next message carries the first one.
		h.srv.Push(llmtest.Reply{Text: []string{"ok"}})
		if err := h.send(t, "again"); err != nil {
			t.Fatalf("second Send: %v", err)
		}
		last := h.srv.Requests()[1]
		if len(last.Messages) == 0 || !strings.Contains(last.Messages[0].Text, "hi") {
			t.Errorf("second request lost the first message: %+v", last.Messages)
		}
	})
}

func TestStreamCut(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		t.Run("before any text: retried", func(t *testing.T) {
			h := newHarness(t, kind, setup{},
				llmtest.Reply{Cut: true},
				llmtest.Reply{Text: []string{"whole answer"}},
			)
			if err := h.send(t, "hi"); err != nil {
				t.Fatalf("Send: %v", err)
			}
			if n := len(h.srv.Requests()); n != 2 {
				t.Errorf("server got %d requests, want 2", n)
			}
			if got := h.streamedText(); got != "whole answer" {
				t.Errorf("streamed text = %q", got)
			}
		})
		t.Run("mid-answer: partial kept", func(t *testing.T) {
			h := newHarness(t, kind, setup{},
				llmtest.Reply{Text: []string{"Otters are ", "never shown"}, CutAfter: 1},
			)
			err := h.send(t, "hi")
			if err == nil {
				t.Fatal("Send succeeded on a cut stream")
			}
			f := h.finished(t)
			if f.Err == nil || f.Text != "Otters are " {
				t.Errorf("TurnFinished = %+v, want the partial text and an error", f)
			}
			if n := len(h.srv.Requests()); n != 1 {
				t.Errorf("server got %d requests, want 1 (no retry once text was shown)", n)
			}
			msgs := h.agent.Messages()
			last := msgs[len(msgs)-1]
			if last.Role != llm.RoleAssistant || last.Text != "Otters are " || !last.Interrupted {
				t.Errorf("last message = %+v, want the interrupted partial answer", last)
			}
			h.srv.Push(llmtest.Reply{Text: []string{"...semi-aquatic."}})
			if err := h.send(t, "go on"); err != nil {
				t.Fatalf("Send after the cut: %v", err)
			}
			r := h.srv.Requests()[1]
			if len(r.Messages) != 3 || !strings.HasPrefix(r.Messages[1].Text, "Otters are ") || !strings.Contains(r.Messages[1].Text, "interrupted") {
				t.Errorf("follow-up request messages = %+v", r.Messages)
			}
		})
	})
}

func TestCancelMidStream(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		hold := make(chan struct{})
		defer close(hold)
		h := newHarness(t, kind, setup{}, llmtest.Reply{Text: []string{"Partial ", "rest"}, Hold: hold})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a failure must not hang
		defer cancel()
		h.onText = func(string) { cancel() } // Esc as soon as text shows
		err := h.agent.Send(ctx, "hi")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Send = %v, want context.Canceled", err)
		}
		if f := h.finished(t); !f.Canceled || f.Text != "Partial " || f.Err != nil {
			t.Errorf("TurnFinished = %+v", f)
		}
		msgs := h.agent.Messages()
		if last := msgs[len(msgs)-1]; last.Role != llm.RoleAssistant || last.Text != "Partial " || !last.Interrupted {
			t.Errorf("last message = %+v", last)
		}
		h.onText = nil
		h.srv.Push(llmtest.Reply{Text: []string{"ok"}})
		if err := h.send(t, "continue"); err != nil {
			t.Fatalf("Send after cancel: %v", err)
		}
		// The model is told what it had said, and that it was interrupted.
		reqs := h.srv.Requests()
		r := reqs[len(reqs)-1]
		if len(r.Messages) != 3 || r.Messages[1].Role != "assistant" || !strings.HasPrefix(r.Messages[1].Text, "Partial ") ||
			!strings.Contains(r.Messages[1].Text, "interrupted") || r.Messages[2].Text != "continue" {
			t.Errorf("follow-up request messages = %+v", r.Messages)
		}
	})
}

func TestCancelDuringToolCall(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		wait := toolname.Qualified("calc", "wait")
		h := newHarness(t, kind, setup{},
			llmtest.Reply{Calls: []llmtest.Call{{ID: "call_wait", Name: wait, Args: `{}`}}},
		)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a failure must not hang
		defer cancel()
		go func() {
			// Cancel once the call is running.
			for ctx.Err() == nil {
				for _, ev := range h.allEvents() {
					if s, ok := ev.(agent.ToolCallStarted); ok && s.ID == "call_wait" {
						time.Sleep(50 * time.Millisecond)
						cancel()
						return
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		err := h.agent.Send(ctx, "wait")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Send = %v, want context.Canceled", err)
		}
		fins := h.toolFinished()
		if len(fins) != 1 || fins[0].Err == nil {
			t.Errorf("ToolCallFinished = %+v, want the canceled call", fins)
		}
		// The conversation stays valid: the real APIs reject a tool call
		// without a result, and the fake server checks that too.
		h.srv.Push(llmtest.Reply{Text: []string{"ok"}})
		if err := h.send(t, "never mind"); err != nil {
			t.Fatalf("Send after cancel: %v", err)
		}
		got := h.srv.Requests()[1].LastToolResults()
		if len(got) != 1 || got[0].CallID != "call_wait" || !got[0].IsError {
			t.Errorf("canceled call's result = %+v", got)
		}
	})
}

func TestMaxTurns(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		call := func(id string) llmtest.Reply {
			return llmtest.Reply{Calls: []llmtest.Call{{ID: id, Name: "lookup_word", Args: `{"word":"again"}`}}}
		}
		h := newHarness(t, kind, setup{opts: func(o *agent.Options) { o.MaxTurns = 2 }}, call("c1"), call("c2"))
		err := h.send(t, "loop")
		if !errors.Is(err, agent.ErrMaxTurns) {
			t.Fatalf("Send = %v, want ErrMaxTurns", err)
		}
		if !strings.Contains(err.Error(), "max_turns") {
			t.Errorf("error %q does not say how to raise the limit", err)
		}
		if n := len(h.srv.Requests()); n != 2 {
			t.Errorf("server got %d requests, want 2", n)
		}
		if f := h.finished(t); !errors.Is(f.Err, agent.ErrMaxTurns) {
			t.Errorf("TurnFinished = %+v", f)
		}
		// Continuing is possible: both calls were answered.
		h.srv.Push(llmtest.Reply{Text: []string{"fine"}})
		if err := h.send(t, "stop looping"); err != nil {
			t.Fatalf("Send after max_turns: %v", err)
		}
	})
}

func TestPermissions(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		t.Run("denied call goes back as an error", func(t *testing.T) {
			var n int
			h := newHarness(t, kind, setup{builtins: []tool.Tool{writeNote(&n)}},
				llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "write_note", Args: `{"word":"x"}`}}},
				llmtest.Reply{Text: []string{"ok, I won't"}},
			)
			h.approver.decisions = []ask.PermissionDecision{ask.Deny}
			if err := h.send(t, "write"); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("denied tool ran %d times", n)
			}
			p := h.approver.prompts()
			if len(p) != 1 || p[0].Tool != "write_note" || p[0].ReadOnly || string(p[0].Arguments) != `{"word":"x"}` {
				t.Errorf("prompts = %+v", p)
			}
			got := h.srv.Requests()[1].LastToolResults()
			if len(got) != 1 || !got[0].IsError || !strings.Contains(got[0].Text, "denied") {
				t.Errorf("result sent back = %+v", got)
			}
			if fins := h.toolFinished(); len(fins) != 1 || !errors.Is(fins[0].Err, agent.ErrDenied) {
				t.Errorf("ToolCallFinished = %+v", fins)
			}
		})
		t.Run("read-only built-in that reaches the network asks", func(t *testing.T) {
			var fetched int
			fetch := &fakeTool{name: "scrape_page", readOnly: true, group: "network", call: func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
				fetched++
				return tool.TextResult("page"), nil
			}}
			h := newHarness(t, kind, setup{builtins: []tool.Tool{fetch}},
				llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "scrape_page", Args: `{"word":"https://example.org"}`}}},
				llmtest.Reply{Text: []string{"fetched"}},
			)
			h.approver.decisions = []ask.PermissionDecision{ask.AllowOnce}
			if err := h.send(t, "fetch it"); err != nil {
				t.Fatal(err)
			}
			p := h.approver.prompts()
			if len(p) != 1 || p[0].Tool != "scrape_page" || !p[0].ReadOnly || p[0].Reason != "it reaches the network" {
				t.Errorf("prompts = %+v, want one for scrape_page saying it reaches the network", p)
			}
			if fetched != 1 {
				t.Errorf("allowed tool ran %d times", fetched)
			}
		})
		t.Run("allow for the session asks once", func(t *testing.T) {
			var n int
			saved := []string{}
			h := newHarness(t, kind, setup{builtins: []tool.Tool{writeNote(&n)}, opts: func(o *agent.Options) {
				o.SavePermission = func(workDir, pattern, decision string) error {
					saved = append(saved, workDir+" "+pattern+" "+decision)
					return nil
				}
			}},
				llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "write_note", Args: `{"word":"x"}`}}},
				llmtest.Reply{Calls: []llmtest.Call{{ID: "c2", Name: "write_note", Args: `{"word":"y"}`}}},
				llmtest.Reply{Text: []string{"done"}},
			)
			h.approver.decisions = []ask.PermissionDecision{ask.AllowAlways}
			if err := h.send(t, "write twice"); err != nil {
				t.Fatal(err)
			}
			if n != 2 || len(h.approver.prompts()) != 1 {
				t.Errorf("tool ran %d times after %d prompts, want 2 after 1", n, len(h.approver.prompts()))
			}
			if len(saved) != 1 || saved[0] != "/work/project write_note allow" {
				t.Errorf("saved permissions = %q", saved)
			}
		})
		t.Run("config rules", func(t *testing.T) {
			var n int
			h := newHarness(t, kind, setup{builtins: []tool.Tool{writeNote(&n), lookupWord()}, opts: func(o *agent.Options) {
				o.Permissions = map[string]string{"write_*": "allow", "lookup_word": "deny"}
			}},
				llmtest.Reply{Calls: []llmtest.Call{
					{ID: "c1", Name: "write_note", Args: `{"word":"x"}`},
					{ID: "c2", Name: "lookup_word", Args: `{"word":"x"}`},
				}},
				llmtest.Reply{Text: []string{"done"}},
			)
			if err := h.send(t, "go"); err != nil {
				t.Fatal(err)
			}
			got := h.srv.Requests()[1].LastToolResults()
			if n != 1 || len(h.approver.prompts()) != 0 {
				t.Errorf("write_note ran %d times with %d prompts; want allowed by config without asking", n, len(h.approver.prompts()))
			}
			if len(got) != 2 || got[0].IsError || !got[1].IsError || !strings.Contains(got[1].Text, "[permissions]") {
				t.Errorf("results = %+v", got)
			}
		})
		t.Run("a config reload applies to the next calls", func(t *testing.T) {
			var n int
			h := newHarness(t, kind, setup{builtins: []tool.Tool{writeNote(&n)}, opts: func(o *agent.Options) {
				o.Permissions = map[string]string{"write_note": "deny"}
			}},
				llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "write_note", Args: `{"word":"x"}`}}},
				llmtest.Reply{Text: []string{"denied"}},
				llmtest.Reply{Calls: []llmtest.Call{{ID: "c2", Name: "write_note", Args: `{"word":"y"}`}}},
				llmtest.Reply{Text: []string{"written"}},
			)
			if err := h.send(t, "write"); err != nil {
				t.Fatal(err)
			}
			h.agent.Configure(agent.Settings{
				Permissions:  map[string]string{"write_*": "Allow"},
				SystemPrompt: "Answer in French.",
			})
			if err := h.send(t, "write again"); err != nil {
				t.Fatal(err)
			}
			reqs := h.srv.Requests()
			if n != 1 || len(h.approver.prompts()) != 0 {
				t.Errorf("write_note ran %d times with %d prompts; want once, allowed by the reloaded config", n, len(h.approver.prompts()))
			}
			if got := reqs[3].LastToolResults(); len(got) != 1 || got[0].IsError {
				t.Errorf("result after the reload = %+v", got)
			}
			if strings.Contains(reqs[0].System, "Answer in French.") || !strings.Contains(reqs[2].System, "Answer in French.") {
				t.Errorf("system prompt before/after the reload:\n%s\n---\n%s", reqs[0].System, reqs[2].System)
			}
		})
	})
}

func TestSampling(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		askModel := toolname.Qualified("calc", "ask_model")
		t.Run("approved", func(t *testing.T) {
			h := newHarness(t, kind, setup{sampler: true},
				llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: askModel, Args: `{"question":"capital of France?"}`}}},
				llmtest.Reply{Text: []string{"Paris"}}, // the sampling request
				llmtest.Reply{Text: []string{"The server's model said Paris."}},
			)
			h.approver.sampling = true
			if err := h.send(t, "ask the server"); err != nil {
				t.Fatal(err)
			}
			reqs := h.srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("server got %d requests, want 3", len(reqs))
			}
			s := reqs[1]
			if s.System != "You answer briefly." || len(s.Messages) != 1 || s.Messages[0].Text != "capital of France?" || len(s.Tools) != 0 || s.MaxTokens != 100 {
				t.Errorf("sampling request = system %q messages %+v tools %v max_tokens %d", s.System, s.Messages, s.Tools, s.MaxTokens)
			}
			got := reqs[2].LastToolResults()
			if len(got) != 1 || got[0].Text != "model said: Paris (test-model)" {
				t.Errorf("tool result = %+v", got)
			}
			if len(h.approver.samples) != 1 || h.approver.samples[0].Server != "calc" || h.approver.samples[0].Messages[0] != "capital of France?" {
				t.Errorf("sampling prompts = %+v", h.approver.samples)
			}
		})
		t.Run("declined", func(t *testing.T) {
			h := newHarness(t, kind, setup{sampler: true},
				llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: askModel, Args: `{"question":"capital of France?"}`}}},
				llmtest.Reply{Text: []string{"The user declined."}},
			)
			h.approver.sampling = false
			if err := h.send(t, "ask the server"); err != nil {
				t.Fatal(err)
			}
			reqs := h.srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("server got %d requests, want 2 (no sampling request)", len(reqs))
			}
			got := reqs[1].LastToolResults()
			if len(got) != 1 || !got[0].IsError || !strings.Contains(got[0].Text, "declined") {
				t.Errorf("tool result = %+v, want the server's report of the declined sampling", got)
			}
		})
	})
}

func TestMalformedArguments(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		h := newHarness(t, kind, setup{},
			llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "lookup_word", Args: `{"word": "ot`}}},
			llmtest.Reply{Text: []string{"sorry"}},
		)
		if err := h.send(t, "define otter"); err != nil {
			t.Fatalf("Send: %v", err)
		}
		// The second request is valid for the API (the fake checks it) and
		// tells the model what was wrong.
		got := h.srv.Requests()[1].LastToolResults()
		if len(got) != 1 || got[0].CallID != "c1" || !got[0].IsError || !strings.Contains(got[0].Text, "JSON object") {
			t.Errorf("result = %+v", got)
		}
	})
}

func TestImageResult(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind llmtest.Kind) {
		snap := &fakeTool{name: "snapshot", readOnly: true, schema: `{"type":"object"}`, call: func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
			return &tool.Result{Content: []mcp.Content{
				&mcp.TextContent{Text: "the page:"},
				&mcp.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\nfake")},
			}}, nil
		}}
		h := newHarness(t, kind, setup{builtins: []tool.Tool{snap}},
			llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "snapshot", Args: `{}`}}},
			llmtest.Reply{Text: []string{"I see a page."}},
		)
		if err := h.send(t, "look"); err != nil {
			t.Fatal(err)
		}
		got := h.srv.Requests()[1].LastToolResults()
		want := 0 // described only: Chat Completions tool messages carry text
		if kind == llmtest.Anthropic {
			want = 1
		}
		if len(got) != 1 || !strings.Contains(got[0].Text, "the page:") || !strings.Contains(got[0].Text, "image/png") || got[0].Images != want {
			t.Errorf("result = %+v, want text describing the image and %d image(s)", got, want)
		}
	})
}
