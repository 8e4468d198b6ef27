package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/tool"
)

// toolHeavyRun plays a 50-turn conversation in which every turn fetches a
// page of about 6 KB with a tool and answers at some length, against a
// model with the given window, and returns the prompt tokens of every
// request (as the server counts them) and the tokens each shares, as a
// byte-identical prefix, with the request before it: what a provider's
// prompt cache could serve.
func toolHeavyRun(tb testing.TB, window int) (input, cacheable int) {
	const turns = 50
	srv := llmtest.New(tb, llmtest.OpenAI)
	var mu sync.Mutex
	n := 0
	srv.Respond = func(r llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if isSummaryRequest(r) {
			return llmtest.Reply{Text: []string{"## Goals\nThe user reads pages about otters, one per turn, and wants a short digest of each.\n## Open tasks\nDigest the next page."}}
		}
		if last := r.Messages[len(r.Messages)-1]; last.Role == "user" {
			n++
			return llmtest.Reply{Text: []string{"Fetching it."}, Calls: []llmtest.Call{{ID: fmt.Sprintf("call_%d", n), Name: "fetch_page", Args: fmt.Sprintf(`{"url":"https://example.com/otters/%d"}`, n)}}}
		}
		return llmtest.Reply{Text: longAnswer(n, 1200)}
	}
	set := tool.NewSet(tool.Options{SpillDir: tb.TempDir(), MaxOutputChars: tool.DefaultMaxOutputChars})
	set.SetBuiltins([]tool.Tool{&fakeTool{name: "fetch_page", readOnly: true, schema: `{"type":"object","properties":{"url":{"type":"string"}}}`,
		call: func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
			return tool.TextResult("<h1>Otters</h1>\n" + strings.Repeat("Sea otters use rocks as tools and keep them in a pouch. ", 6000/56)), nil
		}}})
	rec := &bodyRecorder{}
	p := llm.NewOpenAI(llm.Options{Name: "fake-openai", BaseURL: srv.URL, APIKey: "k", HTTPClient: &http.Client{Transport: rec}})
	a := agent.New(agent.Options{Provider: p, Model: "m", Tools: set, Facts: factsWith(window, 4000)})
	for i := range turns {
		if err := a.Send(context.Background(), fmt.Sprintf("Fetch page %d and digest it.", i+1)); err != nil {
			tb.Fatalf("turn %d: %v", i+1, err)
		}
	}
	for i, r := range srv.Requests() {
		input += r.InputTokens
		if i > 0 {
			cacheable += commonPrefix(prompt(tb, rec.bodies[i-1]), prompt(tb, rec.bodies[i])) / llmtestBytesPerToken
		}
	}
	return input, cacheable
}

const llmtestBytesPerToken = 4

// prompt is a Chat Completions body in the order the model reads it:
// the tools, then the messages.
func prompt(tb testing.TB, body []byte) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		tb.Fatal(err)
	}
	return append(append([]byte(nil), m["tools"]...), m["messages"]...)
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// BenchmarkContextTokens50 prints the prompt tokens summed over a 50-turn,
// tool-heavy conversation with compaction (a 32k window, compact_at 0.8)
// against the same conversation in a window so large it is never
// compacted (target ratio ≤ 0.5), and the share of each that a provider's
// prefix cache could serve.
//
//	context-tokens-50: otter=… baseline=… ratio=…
func BenchmarkContextTokens50(b *testing.B) {
	var otter, baseline, otterCache, baseCache int
	for range b.N {
		otter, otterCache = toolHeavyRun(b, 32_000)
		baseline, baseCache = toolHeavyRun(b, 10_000_000)
	}
	ratio := float64(otter) / float64(baseline)
	b.ReportMetric(ratio, "ratio")
	fmt.Printf("context-tokens-50: otter=%d baseline=%d ratio=%.3f (prompt tokens over 50 tool-heavy turns, compacted in a 32k window vs never; target ≤ 0.5)\n", otter, baseline, ratio)
	fmt.Printf("context-cache-share-50: otter=%.1f%% baseline=%.1f%% ratio=%.3f (share of those prompt tokens a provider's prefix cache could serve)\n",
		100*float64(otterCache)/float64(otter), 100*float64(baseCache)/float64(baseline), (float64(otterCache)/float64(otter))/(float64(baseCache)/float64(baseline)))
}
