package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/tool"
)

// bodyRecorder keeps the raw bodies of the requests sent through it.
type bodyRecorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (b *bodyRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		data, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(data))
		b.mu.Lock()
		b.bodies = append(b.bodies, data)
		b.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(r)
}

// cachingConversation runs two turns, the first with a tool call, through
// a provider whose request bodies are recorded as sent.
func cachingConversation(t *testing.T, kind llmtest.Kind) [][]byte {
	srv := llmtest.New(t, kind,
		llmtest.Reply{Text: []string{"Looking."}, Calls: []llmtest.Call{{ID: "call_1", Name: "lookup_word", Args: `{"word":"otter"}`}}},
		llmtest.Reply{Text: []string{"An otter is a mammal."}},
		llmtest.Reply{Text: []string{"Yes."}},
	)
	rec := &bodyRecorder{}
	opts := llm.Options{BaseURL: srv.URL, APIKey: "k", HTTPClient: &http.Client{Transport: rec}}
	var p llm.Provider = llm.NewOpenAI(opts)
	if kind == llmtest.Anthropic {
		p = llm.NewAnthropic(opts)
	}
	set := tool.NewSet(tool.Options{SpillDir: t.TempDir()})
	set.SetBuiltins([]tool.Tool{lookupWord(), &fakeTool{name: "spell_word", readOnly: true, call: lookupWord().call}})
	clock := time.Date(2026, 3, 4, 23, 59, 59, 0, time.UTC)
	a := agent.New(agent.Options{Provider: p, Model: "claude-sonnet-4-6", Tools: set, Now: func() time.Time {
		clock = clock.Add(time.Hour) // midnight passes between the requests
		return clock
	}})
	ctx := context.Background()
	for _, q := range []string{"What is an otter?", "Is it cute?"} {
		if err := a.Send(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.bodies) != 3 {
		t.Fatalf("%d requests, want 3", len(rec.bodies))
	}
	return rec.bodies
}

func decode(t *testing.T, body []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Anthropic requests mark the tools, the system prompt and the latest turn
// as cache breakpoints, so that each request reads what the one before it
// wrote.
func TestAnthropicRequestsCarryCacheBreakpoints(t *testing.T) {
	t.Parallel()
	for i, body := range cachingConversation(t, llmtest.Anthropic) {
		var req struct {
			Tools    []map[string]any `json:"tools"`
			System   []map[string]any `json:"system"`
			Messages []struct {
				Content []map[string]any `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		ephemeral := func(b map[string]any) bool {
			cc, _ := b["cache_control"].(map[string]any)
			return cc["type"] == "ephemeral"
		}
		if n := len(req.Tools); n != 2 || !ephemeral(req.Tools[n-1]) || ephemeral(req.Tools[0]) {
			t.Errorf("request %d: tools %v: want the breakpoint on the last one", i, req.Tools)
		}
		if len(req.System) != 1 || !ephemeral(req.System[0]) {
			t.Errorf("request %d: system %v has no breakpoint", i, req.System)
		}
		marked := 0
		for j, m := range req.Messages {
			for k, b := range m.Content {
				if ephemeral(b) {
					marked++
					if j != len(req.Messages)-1 || k != len(m.Content)-1 {
						t.Errorf("request %d: breakpoint on message %d block %d, not the latest turn's last block", i, j, k)
					}
				}
			}
		}
		if marked != 1 {
			t.Errorf("request %d: %d breakpoints in the messages, want 1 (the latest turn)", i, marked)
		}
	}
}

// Two consecutive OpenAI requests share their prompt byte for byte up to
// the new message (the same tools in the same order, the same system
// prompt even when the date changes), so that OpenAI's automatic prompt
// caching serves it.
func TestOpenAIRequestsKeepTheirPrefix(t *testing.T) {
	t.Parallel()
	bodies := cachingConversation(t, llmtest.OpenAI)
	for i := 1; i < len(bodies); i++ {
		prev, next := decode(t, bodies[i-1]), decode(t, bodies[i])
		if !bytes.Equal(prev["tools"], next["tools"]) {
			t.Errorf("request %d offers the tools differently:\n%s\n%s", i, prev["tools"], next["tools"])
		}
		p, n := prev["messages"], next["messages"]
		open := p[:len(p)-1] // without the closing ]
		if !bytes.HasPrefix(n, open) || n[len(open)] != ',' {
			t.Errorf("request %d does not begin with request %d's messages:\n%s\n%s", i, i-1, p, n)
		}
		// The body up to the messages' end is the same bytes too.
		at := bytes.Index(bodies[i-1], p)
		if at < 0 || !bytes.HasPrefix(bodies[i], bodies[i-1][:at+len(open)]) {
			t.Errorf("request %d's body does not start with request %d's up to its last message", i, i-1)
		}
	}
}
