package llmtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
)

var addTool = []llm.ToolSpec{{Name: "add", Description: "Add two numbers",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`)}}

// reasoningTurn streams one reasoning response that calls add, through
// otter's provider, and returns the history that answers it.
func reasoningTurn(t *testing.T, s *llmtest.Server) []llm.Message {
	t.Helper()
	msgs := []llm.Message{{Role: llm.RoleUser, Text: "add 1 and 1"}}
	resp, err := s.Provider().Stream(context.Background(), llm.Request{Model: "gpt-5", Messages: msgs, Tools: addTool,
		Thinking: llm.Thinking{Effort: llm.ThinkingLow}}, func(llm.Event) {})
	if err != nil {
		t.Fatal(err)
	}
	return append(msgs, llm.Message{Role: llm.RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls, Reasoning: resp.Reasoning},
		llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: resp.ToolCalls[0].ID, Text: "2"}}})
}

func thinkingReply() llmtest.Reply {
	return llmtest.Reply{Thinking: []string{"The user wants ", "a sum."}, Text: []string{"Adding."},
		Calls: []llmtest.Call{{ID: "call_a1", Name: "add", Args: `{"a":1,"b":1}`}}}
}

// A reasoning turn streams its summary, text and call; the reasoning item
// comes back with its id and encrypted content, the call with its item
// id, and the next request carries them back and is accepted.
func TestResponsesReasoningToolLoop(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llmtest.Responses, thinkingReply(), llmtest.Reply{Text: []string{"1 + 1 = 2."}})
	msgs := []llm.Message{{Role: llm.RoleUser, Text: "add 1 and 1"}}
	var thought, text strings.Builder
	var calls []string
	resp, err := s.Provider().Stream(context.Background(), llm.Request{Model: "gpt-5", Messages: msgs, Tools: addTool,
		Thinking: llm.Thinking{Effort: llm.ThinkingMedium}}, func(ev llm.Event) {
		switch ev := ev.(type) {
		case llm.ReasoningDelta:
			thought.WriteString(ev.Text)
		case llm.TextDelta:
			text.WriteString(ev.Text)
		case llm.ToolCallDelta:
			calls = append(calls, ev.ID+" "+ev.Name)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if thought.String() != "The user wants a sum." || text.String() != "Adding." || strings.Join(calls, ",") != "call_a1 add" {
		t.Errorf("streamed thinking %q, text %q, calls %v", thought.String(), text.String(), calls)
	}
	if resp.StopReason != llm.StopToolUse || len(resp.ToolCalls) != 1 || string(resp.ToolCalls[0].Args) != `{"a":1,"b":1}` ||
		!strings.HasPrefix(resp.ToolCalls[0].ItemID, "fc_") {
		t.Fatalf("response %+v", resp)
	}
	if len(resp.Reasoning) != 1 || !strings.HasPrefix(resp.Reasoning[0].ID, "rs_") || resp.Reasoning[0].Encrypted == "" ||
		resp.Reasoning[0].Text != "The user wants a sum." {
		t.Fatalf("reasoning %+v", resp.Reasoning)
	}
	if resp.Usage.ReasoningTokens == 0 || resp.Usage.OutputTokens < resp.Usage.ReasoningTokens {
		t.Errorf("usage %+v, want reasoning tokens counted within the output", resp.Usage)
	}
	first := s.Requests()[0]
	body, _ := json.Marshal(first.Body)
	for _, want := range []string{`"store":false`, `"include":["reasoning.encrypted_content"]`, `"summary":"auto"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("request lacks %s: %s", want, body)
		}
	}
	if first.Effort != "medium" {
		t.Errorf("reasoning.effort = %q, want medium", first.Effort)
	}

	msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls, Reasoning: resp.Reasoning},
		llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "call_a1", Text: "2"}}})
	resp, err = s.Provider().Stream(context.Background(), llm.Request{Model: "gpt-5", Messages: msgs, Tools: addTool,
		Thinking: llm.Thinking{Effort: llm.ThinkingMedium}}, func(llm.Event) {})
	if err != nil || resp.Text != "1 + 1 = 2." || resp.StopReason != llm.StopEndTurn {
		t.Fatalf("second call: %+v, %v", resp, err)
	}
	second := s.Requests()[1]
	var a llmtest.Message
	for _, m := range second.Messages {
		if m.Role == "assistant" {
			a = m
		}
	}
	if len(a.Thinking) != 1 || a.Thinking[0] != "The user wants a sum." || len(a.ToolCalls) != 1 || a.Text != "Adding." {
		t.Errorf("assistant turn sent back as %+v, want its text, reasoning and call", a)
	}
	if r := second.LastToolResults(); len(r) != 1 || r[0].Text != "2" {
		t.Errorf("tool results %+v", r)
	}
}

// Thinking off: no reasoning settings are sent (models that do not reason
// refuse them), and a scripted thought is not streamed.
func TestResponsesThinkingOff(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llmtest.Responses, thinkingReply())
	resp, err := s.Provider().Stream(context.Background(), llm.Request{Model: "gpt-4.1", Tools: addTool, MaxTokens: 100,
		HasTemperature: true, Temperature: 0.2, Messages: []llm.Message{{Role: llm.RoleUser, Text: "add"}}}, func(llm.Event) {})
	if err != nil || len(resp.Reasoning) != 0 {
		t.Fatalf("%+v, %v", resp, err)
	}
	b := s.Requests()[0].Body
	if _, ok := b["reasoning"]; ok {
		t.Errorf("reasoning sent with thinking off: %v", b["reasoning"])
	}
	if _, ok := b["include"]; ok {
		t.Errorf("include sent with thinking off: %v", b["include"])
	}
	if b["max_output_tokens"] != 100.0 || b["temperature"] != 0.2 {
		t.Errorf("max_output_tokens %v temperature %v", b["max_output_tokens"], b["temperature"])
	}
}

// postResponses sends body as is and returns the status and the error.
func postResponses(t *testing.T, s *llmtest.Server, body map[string]any) (int, string, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(s.URL+"/responses", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Error struct {
			Message string
			Param   *string
			Code    *string
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &out)
	param := ""
	if out.Error.Param != nil {
		param = *out.Error.Param
	}
	if out.Error.Code != nil {
		param += "/" + *out.Error.Code
	}
	return resp.StatusCode, out.Error.Message, param
}

// Each refusal of a stateless conversation fires with the API's own
// status, param and words.
func TestResponsesRefusals(t *testing.T) {
	t.Parallel()
	// A real reasoning turn gives the ids the API would pair.
	s := llmtest.New(t, llmtest.Responses, thinkingReply())
	s.ExpectInvalid = true
	history := reasoningTurn(t, s)
	a := history[1]
	rs, fc := a.Reasoning[0], a.ToolCalls[0]
	user := map[string]any{"role": "user", "content": "add 1 and 1"}
	call := func(withID bool) map[string]any {
		m := map[string]any{"type": "function_call", "call_id": fc.ID, "name": "add", "arguments": "{}"}
		if withID {
			m["id"] = fc.ItemID
		}
		return m
	}
	output := map[string]any{"type": "function_call_output", "call_id": fc.ID, "output": "2"}
	reasoning := func(enc any) map[string]any {
		m := map[string]any{"type": "reasoning", "id": rs.ID, "summary": []any{}}
		if enc != nil {
			m["encrypted_content"] = enc
		}
		return m
	}
	body := func(input ...any) map[string]any {
		return map[string]any{"model": "gpt-5", "stream": true, "store": false, "input": input,
			"reasoning": map[string]any{"effort": "low"}, "include": []any{"reasoning.encrypted_content"}}
	}
	for _, c := range []struct {
		name   string
		body   map[string]any
		status int
		want   string
		param  string
	}{
		{"call without output", body(user, call(false)), 400, "No tool output found for function call " + fc.ID + ".", "input"},
		{"output without call", body(user, output), 400, "No tool call found for function call output with call_id " + fc.ID + ".", "input"},
		{"call without its reasoning", body(user, call(true), output), 400,
			"Item '" + fc.ItemID + "' of type 'function_call' was provided without its required 'reasoning' item: '" + rs.ID + "'.", "input"},
		{"reasoning without its following item", body(user, reasoning(rs.Encrypted), call(false), output), 400,
			"Item '" + rs.ID + "' of type 'reasoning' was provided without its required following item.", "input"},
		{"reasoning not stored", body(user, reasoning(nil), call(true), output), 404,
			"Item with id '" + rs.ID + "' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", "input"},
		{"forged encrypted content", body(user, reasoning("gAAAABforged"), call(true), output), 400,
			"The encrypted content for item " + rs.ID + " could not be verified. Reason: Encrypted content could not be decrypted or parsed.", "/invalid_encrypted_content"},
		{"all of it, as given", body(user, reasoning(rs.Encrypted), call(true), output), 0, "", ""},
	} {
		if c.status == 0 {
			s.Push(llmtest.Reply{Text: []string{"2"}})
		}
		status, msg, param := postResponses(t, s, c.body)
		if c.status == 0 {
			if status != 200 {
				t.Errorf("%s: %d %q, want it accepted", c.name, status, msg)
			}
			continue
		}
		if status != c.status || msg != c.want || param != c.param {
			t.Errorf("%s:\n got %d %q (%s)\nwant %d %q (%s)", c.name, status, msg, param, c.status, c.want, c.param)
		}
	}

	// Through otter's provider: a history that lost its reasoning is
	// refused, not quietly sent without it.
	lost := append([]llm.Message(nil), history...)
	lost[1].Reasoning = nil
	_, err := s.Provider().Stream(context.Background(), llm.Request{Model: "gpt-5", Messages: lost, Tools: addTool,
		Thinking: llm.Thinking{Effort: llm.ThinkingLow}}, func(llm.Event) {})
	var apiErr *llm.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "without its required 'reasoning' item") {
		t.Errorf("history without its reasoning: %v", err)
	}
}

func TestResponsesRefusesMoreThan128Tools(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llmtest.Responses)
	_, apiErr := stream(t, s, llm.Request{Model: "gpt-5", Tools: tools(130), Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}})
	want := "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 130 instead."
	if apiErr == nil || apiErr.StatusCode != 400 || apiErr.Message != want || apiErr.Code != "array_above_max_length" {
		t.Errorf("130 tools: %+v, want 400 %q", apiErr, want)
	}
}

// The Responses API says a prompt is too long inside the stream; otter
// still knows it for what it is.
func TestResponsesContextWindowRefusal(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llmtest.Responses)
	s.ContextWindow = 1000
	_, err := s.Provider().Stream(context.Background(), llm.Request{Model: "gpt-5",
		Messages: []llm.Message{{Role: llm.RoleUser, Text: strings.Repeat("x", 8000)}}}, func(llm.Event) {})
	if _, ok := llm.TooLong(err); !ok || !strings.Contains(err.Error(), "Your input exceeds the context window of this model.") {
		t.Errorf("err = %v, want a too-long refusal in the API's words", err)
	}
}

// Failures inside the stream: a server error is retried, an answer cut at
// the output limit says so, a dropped stream is reported as cut.
func TestResponsesStreamFailures(t *testing.T) {
	t.Parallel()
	hi := llm.Request{Model: "gpt-5", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}
	s := llmtest.New(t, llmtest.Responses, llmtest.Reply{StreamError: "server_error"}, llmtest.Reply{Text: []string{"ok"}},
		llmtest.Reply{Text: []string{"a long"}, AtLimit: true})
	resp, err := s.Provider().Stream(context.Background(), hi, func(llm.Event) {})
	if err != nil || resp.Text != "ok" || len(s.Requests()) != 2 {
		t.Errorf("server_error then ok: %+v, %v, %d requests", resp, err, len(s.Requests()))
	}
	resp, err = s.Provider().Stream(context.Background(), hi, func(llm.Event) {})
	if err != nil || resp.StopReason != llm.StopMaxTokens {
		t.Errorf("at the limit: %+v, %v", resp, err)
	}
	cut := llmtest.New(t, llmtest.Responses, llmtest.Reply{Text: []string{"a", "b"}, CutAfter: 1}, llmtest.Reply{Text: []string{"a", "b"}, CutAfter: 1})
	resp, err = cut.Provider().Stream(context.Background(), hi, func(llm.Event) {})
	if !errors.Is(err, llm.ErrStreamCut) && (err == nil || !strings.Contains(err.Error(), "stream")) || resp.Text != "a" {
		t.Errorf("cut: %+v, %v", resp, err)
	}
}
