package llmtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// stream sends req through otter's real provider for s and returns the
// API's error, as a *llm.Error.
func stream(t *testing.T, s *llmtest.Server, req llm.Request) (*llm.Response, *llm.Error) {
	t.Helper()
	resp, err := s.Provider().Stream(context.Background(), req, func(llm.Event) {})
	if err == nil {
		return resp, nil
	}
	var apiErr *llm.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("Stream: %v, want an API error", err)
	}
	return resp, apiErr
}

func tools(n int) []llm.ToolSpec {
	specs := make([]llm.ToolSpec, n)
	for i := range specs {
		specs[i] = llm.ToolSpec{Name: fmt.Sprintf("tool_%d", i), Description: "a tool",
			InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}
	}
	return specs
}

func TestOpenAIRefusesMoreThan128Tools(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"ok"}})
	hi := []llm.Message{{Role: llm.RoleUser, Text: "hi"}}

	_, apiErr := stream(t, s, llm.Request{Model: "gpt-4o", Messages: hi, Tools: tools(129)})
	if apiErr == nil || apiErr.StatusCode != http.StatusBadRequest {
		t.Fatalf("129 tools: err = %v, want HTTP 400", apiErr)
	}
	want := "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 129 instead."
	if apiErr.Message != want {
		t.Errorf("message = %q, want %q", apiErr.Message, want)
	}
	body := s.Requests()[0]
	if body.Refused == "" {
		t.Error("the refused request is not marked Refused")
	}

	// 128 is fine, and the scripted reply was not used up by the refusal.
	resp, apiErr := stream(t, s, llm.Request{Model: "gpt-4o", Messages: hi, Tools: tools(128)})
	if apiErr != nil || resp.Text != "ok" {
		t.Fatalf("128 tools: %v, %+v", apiErr, resp)
	}
}

func TestOpenAIToolCapIsInTheBody(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llmtest.OpenAI)
	resp := post(t, s, `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}],"tools":[`+
		strings.TrimSuffix(strings.Repeat(`{"type":"function","function":{"name":"t","parameters":{"type":"object"}}},`, 200), ",")+`]}`)
	var body struct {
		Error struct{ Type, Param, Code string } `json:"error"`
	}
	decode(t, resp, &body)
	if resp.StatusCode != 400 || body.Error.Code != "array_above_max_length" || body.Error.Param != "tools" || body.Error.Type != "invalid_request_error" {
		t.Errorf("got %d %+v, want 400 invalid_request_error array_above_max_length on tools", resp.StatusCode, body.Error)
	}
}

func TestAnthropicHasNoToolCap(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llmtest.Anthropic, llmtest.Reply{Text: []string{"ok"}})
	resp, apiErr := stream(t, s, llm.Request{Model: "claude-sonnet-4-5", MaxTokens: 100,
		Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}, Tools: tools(300)})
	if apiErr != nil || resp.Text != "ok" {
		t.Fatalf("300 tools: %v", apiErr)
	}
}

func TestContextWindow(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("many words of a long conversation ", 400) // ~14,000 bytes, ~3,500 tokens
	for _, tc := range []struct {
		kind        llmtest.Kind
		maxTokens   int
		text        string
		wantCode    string // OpenAI only
		wantMessage string
	}{
		{llmtest.OpenAI, 0, long, "context_length_exceeded", "This model's maximum context length is 2000 tokens. However, your messages resulted in"},
		{llmtest.OpenAI, 1990, "a short question, but a large completion", "context_length_exceeded", "in the completion)"},
		{llmtest.Anthropic, 100, long, "", "prompt is too long: "},
		{llmtest.Anthropic, 1990, "a short question, but a large completion", "", "input length and `max_tokens` exceed context limit: "},
	} {
		t.Run(fmt.Sprintf("%s-%d", tc.kind, tc.maxTokens), func(t *testing.T) {
			t.Parallel()
			s := llmtest.New(t, tc.kind)
			s.ContextWindow = 2000
			_, apiErr := stream(t, s, llm.Request{Model: "m", MaxTokens: tc.maxTokens,
				Messages: []llm.Message{{Role: llm.RoleUser, Text: tc.text}}})
			if apiErr == nil || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, tc.wantMessage) {
				t.Fatalf("err = %v, want 400 with %q", apiErr, tc.wantMessage)
			}
			if tc.kind == llmtest.Anthropic && strings.HasPrefix(tc.wantMessage, "prompt is too long") &&
				!strings.HasSuffix(apiErr.Message, " tokens > 2000 maximum") {
				t.Errorf("message = %q, want Anthropic's 'N tokens > 2000 maximum'", apiErr.Message)
			}
			var oaErr *openai.Error
			if tc.wantCode != "" && (!errors.As(apiErr, &oaErr) || oaErr.Code != tc.wantCode || oaErr.Param != "messages") {
				t.Errorf("the SDK's error %#v does not carry the code %s on messages", oaErr, tc.wantCode)
			}
		})
	}
}

func TestContextWindowReportsUsage(t *testing.T) {
	t.Parallel()
	for _, kind := range llmtest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			s := llmtest.New(t, kind, llmtest.Reply{Text: []string{"an answer of some length"}})
			s.ContextWindow = 100_000
			resp, apiErr := stream(t, s, llm.Request{Model: "m", MaxTokens: 100,
				Messages: []llm.Message{{Role: llm.RoleUser, Text: strings.Repeat("x", 4000)}}})
			if apiErr != nil {
				t.Fatal(apiErr)
			}
			got, want := resp.Usage.InputTokens, int64(s.Requests()[0].InputTokens)
			if got != want || got < 1000 {
				t.Errorf("input tokens = %d, want the server's estimate %d (≥ 1000 for 4,000 bytes)", got, want)
			}
			if resp.Usage.OutputTokens != 6 { // 24 bytes
				t.Errorf("output tokens = %d, want 6", resp.Usage.OutputTokens)
			}
		})
	}
}

func TestUnansweredToolCallIsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind llmtest.Kind
		body string
		want string
	}{
		{llmtest.OpenAI, `{"model":"m","stream":true,"messages":[
			{"role":"user","content":"hi"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},
			{"role":"user","content":"and now?"}]}`,
			"messages[2]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1"},
		{llmtest.Anthropic, `{"model":"m","max_tokens":10,"stream":true,"messages":[
			{"role":"user","content":"hi"},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},
			{"role":"user","content":"and now?"}]}`,
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1."},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			t.Parallel()
			s := llmtest.New(t, tc.kind, llmtest.Reply{Text: []string{"unused"}})
			s.ExpectInvalid = true
			resp := post(t, s, tc.body)
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 400 || !strings.Contains(string(raw), tc.want) {
				t.Errorf("got %d %s, want 400 with %q", resp.StatusCode, raw, tc.want)
			}
		})
	}
}

func post(t *testing.T, s *llmtest.Server, body string) *http.Response {
	t.Helper()
	path := "/chat/completions"
	if s.Kind == llmtest.Anthropic {
		path = "/v1/messages"
	}
	resp, err := http.Post(s.URL+path, "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func decode(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
