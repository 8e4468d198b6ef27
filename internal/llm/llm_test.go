package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
)

func stream(t *testing.T, p llm.Provider, req llm.Request) (*llm.Response, []llm.Event, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var evs []llm.Event
	resp, err := p.Stream(ctx, req, func(ev llm.Event) { evs = append(evs, ev) })
	return resp, evs, err
}

func hello(model string) llm.Request {
	return llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}
}

func TestStreamAssemblesToolCalls(t *testing.T) {
	for _, kind := range llmtest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			srv := llmtest.New(t, kind, llmtest.Reply{Text: []string{"Checking."}, Calls: []llmtest.Call{
				{ID: "call_1", Name: "lookup", Args: `{"word":"otter","limit":3}`},
				{ID: "call_2", Name: "noargs", Args: `{}`},
			}})
			req := hello("m")
			req.Tools = []llm.ToolSpec{
				{Name: "lookup", Description: "Look up", InputSchema: json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"],"additionalProperties":false}`)},
				{Name: "noargs", InputSchema: json.RawMessage(`{"type":"object"}`)},
			}
			resp, evs, err := stream(t, srv.Provider(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "Checking." || resp.StopReason != llm.StopToolUse || len(resp.ToolCalls) != 2 {
				t.Fatalf("response = %+v", resp)
			}
			c := resp.ToolCalls[0]
			if c.ID != "call_1" || c.Name != "lookup" || string(c.Args) != `{"word":"otter","limit":3}` {
				t.Errorf("call = %+v (args %s)", c, c.Args)
			}
			var deltas []string
			for _, ev := range evs {
				if d, ok := ev.(llm.ToolCallDelta); ok {
					deltas = append(deltas, d.Name)
				}
			}
			if strings.Join(deltas, ",") != "lookup,noargs" {
				t.Errorf("ToolCallDelta events = %v", deltas)
			}
			r := srv.Requests()[0]
			if strings.Join(r.Tools, ",") != "lookup,noargs" {
				t.Errorf("offered tools = %v", r.Tools)
			}
			// The schema reaches the API whole.
			body, _ := json.Marshal(r.Body["tools"])
			if !strings.Contains(string(body), `"additionalProperties":false`) || !strings.Contains(string(body), `"required":["word"]`) {
				t.Errorf("tools as sent = %s", body)
			}
		})
	}
}

func TestToolResultImages(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	for _, kind := range llmtest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			srv := llmtest.New(t, kind, llmtest.Reply{Text: []string{"a chart"}})
			req := llm.Request{Model: "m", Messages: []llm.Message{
				{Role: llm.RoleUser, Text: "draw"},
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "draw", Args: json.RawMessage(`{}`)}}},
				{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "c1", Text: "[image: image/png, 12 bytes]", Images: []llm.Image{{MIMEType: "image/png", Data: png}}}}},
			}}
			if _, _, err := stream(t, srv.Provider(), req); err != nil {
				t.Fatal(err)
			}
			res := srv.Requests()[0].LastToolResults()
			if len(res) != 1 || res[0].CallID != "c1" || !strings.Contains(res[0].Text, "image/png") {
				t.Fatalf("tool results = %+v", res)
			}
			want := 0 // Chat Completions tool messages take text only
			if kind == llmtest.Anthropic {
				want = 1
			}
			if res[0].Images != want {
				t.Errorf("images sent = %d, want %d", res[0].Images, want)
			}
		})
	}
}

func TestStreamErrors(t *testing.T) {
	for _, kind := range llmtest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			provider := func(srv *llmtest.Server) llm.Provider {
				o := llm.Options{Name: "p", BaseURL: srv.URL, APIKey: "k", MaxRetries: 1}
				if kind == llmtest.Anthropic {
					return llm.NewAnthropic(o)
				}
				return llm.NewOpenAI(o)
			}
			t.Run("5xx retried by the SDK", func(t *testing.T) {
				srv := llmtest.New(t, kind, llmtest.Reply{Status: 503, Message: "overloaded"}, llmtest.Reply{Text: []string{"ok"}})
				resp, evs, err := stream(t, provider(srv), hello("m"))
				if err != nil || resp.Text != "ok" || len(srv.Requests()) != 2 {
					t.Fatalf("resp %+v err %v requests %d", resp, err, len(srv.Requests()))
				}
				// The SDK's own retry is announced, so `otter -p` can say so.
				if r, ok := evs[0].(llm.Retrying); !ok || r.Attempt != 1 || !strings.Contains(r.Err.Error(), "503") {
					t.Errorf("first event = %#v, want Retrying attempt 1 naming HTTP 503", evs[0])
				}
			})
			t.Run("429 retried after Retry-After, announced", func(t *testing.T) {
				srv := llmtest.New(t, kind, llmtest.Reply{Status: 429, Message: "slow down", Header: map[string]string{"Retry-After": "1"}}, llmtest.Reply{Text: []string{"ok"}})
				resp, evs, err := stream(t, provider(srv), hello("m"))
				if err != nil || resp.Text != "ok" {
					t.Fatalf("resp %+v err %v", resp, err)
				}
				if r, ok := evs[0].(llm.Retrying); !ok || r.Delay != time.Second || !strings.Contains(r.Err.Error(), "429") {
					t.Errorf("first event = %#v, want Retrying in 1s naming HTTP 429", evs[0])
				}
			})
			t.Run("5xx persisting", func(t *testing.T) {
				srv := llmtest.New(t, kind, llmtest.Reply{Status: 500, Message: "boom"}, llmtest.Reply{Status: 500, Message: "boom"})
				_, _, err := stream(t, provider(srv), hello("m"))
				var apiErr *llm.Error
				if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), "try again later") {
					t.Errorf("err = %v", err)
				}
				if n := len(srv.Requests()); n != 2 {
					t.Errorf("requests = %d, want 2 (the retry budget)", n)
				}
			})
			errType := "server_error" // what OpenAI puts in a failed stream
			if kind == llmtest.Anthropic {
				errType = "overloaded_error"
			}
			t.Run("error inside the stream is retried", func(t *testing.T) {
				srv := llmtest.New(t, kind, llmtest.Reply{StreamError: errType}, llmtest.Reply{Text: []string{"ok"}})
				resp, evs, err := stream(t, provider(srv), hello("m"))
				if err != nil || resp.Text != "ok" || len(srv.Requests()) != 2 {
					t.Fatalf("resp %+v err %v requests %d", resp, err, len(srv.Requests()))
				}
				if r, ok := evs[0].(llm.Retrying); !ok || !strings.Contains(r.Err.Error(), errType) {
					t.Errorf("first event = %#v, want Retrying naming %s", evs[0], errType)
				}
			})
			t.Run("error inside the stream persisting", func(t *testing.T) {
				bad := llmtest.Reply{StreamError: errType}
				srv := llmtest.New(t, kind, bad, bad, bad)
				_, _, err := stream(t, provider(srv), hello("m"))
				var apiErr *llm.Error
				if !errors.As(err, &apiErr) || apiErr.Type != errType {
					t.Fatalf("err = %#v, want an llm.Error of type %s", err, errType)
				}
				msg := err.Error()
				if strings.Contains(msg, "HTTP 200") || !strings.Contains(msg, errType) ||
					!strings.Contains(msg, "tried 3 times") || !strings.Contains(msg, "try again later") {
					t.Errorf("err = %q; want the error type, the attempts and advice, and no HTTP 200", msg)
				}
				if kind == llmtest.Anthropic && !strings.Contains(msg, "overloaded") {
					t.Errorf("err = %q, want it to say the provider is overloaded", msg)
				}
			})
			t.Run("malformed event", func(t *testing.T) {
				bad := llmtest.Reply{Malformed: true}
				srv := llmtest.New(t, kind, bad, bad, bad)
				_, _, err := stream(t, provider(srv), hello("m"))
				if err == nil || !strings.Contains(err.Error(), "not valid JSON") {
					t.Errorf("err = %v, want it to say the provider sent an event that is not valid JSON", err)
				}
			})
			t.Run("cut before output is retried with a Retrying event", func(t *testing.T) {
				srv := llmtest.New(t, kind, llmtest.Reply{Cut: true}, llmtest.Reply{Text: []string{"ok"}})
				resp, evs, err := stream(t, provider(srv), hello("m"))
				if err != nil || resp.Text != "ok" {
					t.Fatalf("resp %+v err %v", resp, err)
				}
				if _, ok := evs[0].(llm.Retrying); !ok {
					t.Errorf("first event = %#v, want Retrying", evs[0])
				}
			})
			t.Run("server not running", func(t *testing.T) {
				// A port nothing listens on, like a local Ollama that is not started.
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				base := "http://" + ln.Addr().String() + "/v1"
				ln.Close()
				o := llm.Options{Name: "local", BaseURL: base, APIKey: "k", MaxRetries: 4}
				p := llm.Provider(llm.NewOpenAI(o))
				if kind == llmtest.Anthropic {
					p = llm.NewAnthropic(o)
				}
				_, evs, err := stream(t, p, hello("m"))
				if err == nil || !strings.Contains(err.Error(), "cannot connect to "+base) || !strings.Contains(err.Error(), "is the server running?") {
					t.Errorf("err = %v, want it to name %s and ask whether the server runs", err, base)
				}
				retries := 0
				for _, ev := range evs {
					if _, ok := ev.(llm.Retrying); ok {
						retries++
					}
				}
				if retries != 0 { // a local server that refuses is not running: retrying only delays saying so
					t.Errorf("%d Retrying events for a refused connection to 127.0.0.1, want none: %#v", retries, evs)
				}
			})
			t.Run("cut after output keeps the partial text", func(t *testing.T) {
				srv := llmtest.New(t, kind, llmtest.Reply{Text: []string{"par", "tial"}, CutAfter: 1})
				resp, _, err := stream(t, provider(srv), hello("m"))
				if err == nil || resp == nil || resp.Text != "par" {
					t.Errorf("resp %+v err %v", resp, err)
				}
			})
			t.Run("canceled", func(t *testing.T) {
				hold := make(chan struct{})
				defer close(hold)
				srv := llmtest.New(t, kind, llmtest.Reply{Text: []string{"a", "b"}, Hold: hold})
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a failure must not hang
				defer cancel()
				resp, err := provider(srv).Stream(ctx, hello("m"), func(ev llm.Event) {
					if _, ok := ev.(llm.TextDelta); ok {
						cancel()
					}
				})
				if !errors.Is(err, context.Canceled) || resp.Text != "a" {
					t.Errorf("resp %+v err %v", resp, err)
				}
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("requests = %d, want 1 (no retry after cancel)", n)
				}
			})
		})
	}
}

// TestCompatibleServerQuirks: servers that send each tool call whole with
// index 0 and finish with "stop" (older Ollama) still give separate calls.
func TestCompatibleServerQuirks(t *testing.T) {
	srv := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{WholeCalls: true, Calls: []llmtest.Call{
		{ID: "call_a", Name: "lookup", Args: `{"word":"a"}`},
		{ID: "call_b", Name: "lookup", Args: `{"word":"b"}`},
	}})
	resp, _, err := stream(t, srv.Provider(), hello("qwen3:8b"))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 || resp.StopReason != llm.StopToolUse ||
		resp.ToolCalls[0].ID != "call_a" || string(resp.ToolCalls[0].Args) != `{"word":"a"}` ||
		resp.ToolCalls[1].ID != "call_b" || string(resp.ToolCalls[1].Args) != `{"word":"b"}` {
		t.Errorf("response = %+v", resp)
	}
}
