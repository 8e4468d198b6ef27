package llmtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// postMessages sends body to the fake Anthropic server as is and returns the
// status and the error message.
func postMessages(t *testing.T, s *llmtest.Server, body map[string]any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(s.URL+"/v1/messages", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Error struct{ Message string } `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out.Error.Message
}

// With thinking on, a tool loop whose assistant turn lacks its thinking
// block, or carries a forged signature, is refused with the API's words.
func TestThinkingHistoryIsCheckedAsTheAPIDoes(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llmtest.Anthropic)
	s.ExpectInvalid = true
	toolTurn := func(first ...map[string]any) []any {
		content := []any{}
		for _, b := range first {
			content = append(content, b)
		}
		content = append(content, map[string]any{"type": "tool_use", "id": "t1", "name": "add", "input": map[string]any{}})
		return []any{
			map[string]any{"role": "user", "content": "add"},
			map[string]any{"role": "assistant", "content": content},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "2"}}},
		}
	}
	body := func(msgs []any) map[string]any {
		return map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 4096, "messages": msgs,
			"thinking": map[string]any{"type": "enabled", "budget_tokens": 2048}}
	}
	status, msg := postMessages(t, s, body(toolTurn()))
	want := "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block"
	if status != 400 || !strings.HasPrefix(msg, want) {
		t.Errorf("no thinking block: %d %q, want 400 %q…", status, msg, want)
	}
	status, msg = postMessages(t, s, body(toolTurn(map[string]any{"type": "thinking", "thinking": "hm", "signature": "forged"})))
	if status != 400 || msg != "messages.1.content.0: Invalid `signature` in `thinking` block" {
		t.Errorf("forged signature: %d %q", status, msg)
	}
	// What otter's provider sends back passes: the block as it came.
	s2 := llmtest.New(t, llmtest.Anthropic, llmtest.Reply{Thinking: []string{"Let me add."}, Calls: []llmtest.Call{{ID: "t1", Name: "add", Args: `{}`}}},
		llmtest.Reply{Text: []string{"2"}})
	p := s2.Provider()
	th := llm.Thinking{Effort: llm.ThinkingLow}
	msgs := []llm.Message{{Role: llm.RoleUser, Text: "add"}}
	resp, err := p.Stream(context.Background(), llm.Request{Model: "claude-sonnet-4-5", Messages: msgs, Thinking: th}, func(llm.Event) {})
	if err != nil || len(resp.Reasoning) != 1 || resp.Reasoning[0].Signature != llmtest.Sign("Let me add.") {
		t.Fatalf("first call: %v, reasoning %+v", err, resp.Reasoning)
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, ToolCalls: resp.ToolCalls, Reasoning: resp.Reasoning},
		llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "t1", Text: "2"}}})
	if _, err := p.Stream(context.Background(), llm.Request{Model: "claude-sonnet-4-5", Messages: msgs, Thinking: th}, func(llm.Event) {}); err != nil {
		t.Fatalf("second call with the thinking sent back: %v", err)
	}
	if got := s2.Requests()[1]; got.Thinking != 2048 || len(got.Messages[1].Thinking) != 1 {
		t.Errorf("second request: thinking budget %d, assistant thinking %q", got.Thinking, got.Messages[1].Thinking)
	}
}

// Each host says the window its own way; otter's provider reads them all.
func TestProbeWindowOfEachHost(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		host llmtest.Host
		info llmtest.ModelInfo
		want int
	}{
		{llmtest.HostOllama, llmtest.ModelInfo{Window: 40960, Loaded: 8192}, 8192},
		{llmtest.HostOllama, llmtest.ModelInfo{Window: 40960}, 40960},
		{llmtest.HostVLLM, llmtest.ModelInfo{Window: 32768}, 32768},
		{llmtest.HostOpenRouter, llmtest.ModelInfo{Window: 200000, Input: 3, Output: 15}, 200000},
		{llmtest.HostLMStudio, llmtest.ModelInfo{Window: 131072, Loaded: 16384}, 16384},
	} {
		s := llmtest.New(t, llmtest.OpenAI)
		s.Host, s.Info = c.host, map[string]llmtest.ModelInfo{"m": c.info}
		w, err := s.Provider().(llm.WindowProber).ProbeWindow(context.Background(), "m")
		if err != nil || w.Tokens != c.want {
			t.Errorf("%s %+v: window %+v, %v; want %d", c.host, c.info, w, err, c.want)
		}
	}
	s := llmtest.New(t, llmtest.OpenAI) // says nothing
	if w, err := s.Provider().(llm.WindowProber).ProbeWindow(context.Background(), "m"); err == nil {
		t.Errorf("a plain server: window %+v, want ErrNoWindow", w)
	}
}
